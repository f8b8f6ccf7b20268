//! Live progress on a terminal: one spinner line per node saying what it is
//! doing right now (pushing, which phase, which unit it restarts), under
//! the same event lines that plain mode prints, so the scrollback reads the
//! same either way. [`Progress::for_stderr`] picks this on a terminal and
//! [`super::render::Lines`] otherwise (CI logs, pipes).

use std::collections::BTreeMap;
use std::io::{IsTerminal, Stderr};
use std::sync::Mutex;
use std::time::Duration;

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::events::{Event, Sink};
use super::render::{line, Lines};
use crate::shown::shown;

pub struct Live {
    mp: MultiProgress,
    overall: ProgressBar,
    nodes: Mutex<BTreeMap<String, ProgressBar>>,
    verbose: bool,
}

impl Live {
    pub fn new(verbose: bool) -> Live {
        let mp = MultiProgress::with_draw_target(ProgressDrawTarget::stderr());
        let overall = mp.add(spinner("{spinner} {msg} ({elapsed})"));
        overall.set_message("connecting");
        Live { mp, overall, nodes: Mutex::new(BTreeMap::new()), verbose }
    }

    /// The node's line, created on its first event.
    fn node(&self, name: &str) -> ProgressBar {
        let mut nodes = self.nodes.lock().unwrap_or_else(|p| p.into_inner());
        nodes
            .entry(name.to_string())
            .or_insert_with(|| self.mp.add(spinner(&format!("  {{spinner}} {name}: {{msg}}"))))
            .clone()
    }

    fn status(&self, name: &str, msg: String) {
        self.node(name).set_message(shown(&msg).into_owned());
    }

    fn done(&self, name: &str, msg: &str) {
        self.node(name).finish_with_message(msg.to_string());
    }

    /// Removes the bars, leaving only the printed lines; call before the recap.
    pub fn finish(&self) {
        for b in self.nodes.lock().unwrap_or_else(|p| p.into_inner()).values() {
            b.finish_and_clear();
        }
        self.overall.finish_and_clear();
        let _ = self.mp.clear();
    }
}

fn spinner(template: &str) -> ProgressBar {
    let style = ProgressStyle::with_template(template).unwrap_or_else(|_| ProgressStyle::default_spinner());
    let b = ProgressBar::new_spinner().with_style(style);
    b.enable_steady_tick(Duration::from_millis(120));
    b
}

impl Sink for Live {
    fn emit(&self, e: Event) {
        if let Some(l) = line(&e, self.verbose) {
            self.mp.suspend(|| eprintln!("{l}"));
        }
        match e {
            Event::NodeConnected { node } => self.status(&node, "reading its state".into()),
            Event::NodeUnreachable { node, .. } => self.done(&node, "unreachable"),
            Event::NodeUnchanged { node } => self.done(&node, "unchanged"),
            Event::NodeChanged { node, .. } => self.status(&node, "pushing what it lacks".into()),
            Event::BlobsPushed { node, .. } => self.status(&node, "pushed, waiting for the others".into()),
            Event::Staged { node, .. } => self.status(&node, "staged, waiting for its phases".into()),
            Event::PhaseStarted { phase, nodes } => {
                self.overall.set_message(format!("phase {phase}"));
                for n in nodes {
                    self.status(&n, format!("{phase}: switching"));
                }
            }
            Event::UnitAction { node, phase, unit, action } => self.status(&node, format!("{phase}: {action} {unit}")),
            Event::HookRan { node, phase, hook, .. } => self.status(&node, format!("{phase}: hook {hook}")),
            Event::CheckPassed { node, phase, check, .. } => {
                self.status(&node, format!("{phase}: check {check} passed"))
            }
            Event::NodePhaseFinished { node, phase, .. } => self.status(&node, format!("{phase} done")),
            Event::Failed { node, .. } => self.status(&node, "FAILED, rolling back".into()),
            Event::RolledBack { node, phase } => self.status(&node, format!("{phase} rolled back")),
            Event::SelfRolledBack { node, rollback } => {
                self.status(&node, format!("{} rolled back by the node", rollback.phase))
            }
            Event::Committed { node, generation } => self.done(&node, &format!("generation {generation}")),
            _ => {}
        }
    }
}

/// Where progress goes: live bars on a terminal, plain lines otherwise.
pub enum Progress {
    Live(Live),
    Lines(Lines<Stderr>),
}

impl Progress {
    /// Plain lines are verbose when not on a terminal: a log is read later
    /// and should say everything.
    pub fn for_stderr(verbose: bool) -> Progress {
        if std::io::stderr().is_terminal() {
            Progress::Live(Live::new(verbose))
        } else {
            Progress::Lines(Lines::new(std::io::stderr(), true))
        }
    }

    pub fn finish(&self) {
        if let Progress::Live(l) = self {
            l.finish();
        }
    }

    /// The live bars, to hold still while something else writes to the
    /// terminal (`MultiProgress::suspend`); `None` for plain lines.
    pub fn bars(&self) -> Option<MultiProgress> {
        match self {
            Progress::Live(l) => Some(l.mp.clone()),
            Progress::Lines(_) => None,
        }
    }
}

impl Sink for Progress {
    fn emit(&self, e: Event) {
        match self {
            Progress::Live(l) => l.emit(e),
            Progress::Lines(l) => l.emit(e),
        }
    }
}
