//! One [`Step`] on one node, forward or undone: hooks (with their `unless`
//! guards), the unit operations `node::plan` decided, the phase link flip,
//! checks with retries (sooner at first: `retry`). Every step reports through the
//! [`Sink`]; a failure comes back as a [`Fail`] naming phase, unit and the
//! unit's last journal lines.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::time::Duration;

use super::events::{Event, Sink};
use super::failpoint;
use super::plan::Step;
use crate::closure::{Check, Hook, When};
use crate::node::{changed_files, plan_units, ArmedStep, Manifest, Node, NodeError, NodeExit, UnitPlan};
use crate::transport::shell_quote;

/// Why a phase failed on a node.
#[derive(Debug, Clone, Default)]
pub struct Fail {
    pub phase: Option<String>,
    pub unit: Option<String>,
    pub message: String,
    pub journal: Option<String>,
    /// The node took no new connection after the phase switched: it moves
    /// the phase back by itself within this many seconds once the run
    /// lets go of it, and the run must not (see [`confirm`]).
    pub cut_off: Option<u32>,
}

impl Fail {
    pub fn msg(phase: Option<&str>, message: impl std::fmt::Display) -> Fail {
        Fail { phase: phase.map(str::to_string), message: message.to_string(), ..Fail::default() }
    }

    pub fn event(&self, node: &str) -> Event {
        Event::Failed {
            node: node.to_string(),
            phase: self.phase.clone(),
            unit: self.unit.clone(),
            message: self.message.clone(),
            journal: self.journal.clone(),
        }
    }
}

const SKIPPED: &str = "kdeploy-hook-skipped";

pub(crate) fn output_tail(out: &crate::transport::Output) -> String {
    let mut s = String::from_utf8_lossy(&out.stdout).into_owned();
    s += &String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = s.trim_end().lines().collect();
    lines[lines.len().saturating_sub(20)..].join("\n")
}

/// How long a hook, one try of a check, and one unit operation may take
/// on a node before it is killed and the step fails.
#[derive(Debug, Clone, Copy)]
pub struct Deadlines {
    pub hook: Duration,
    pub check: Duration,
    pub unit: Duration,
}

impl Default for Deadlines {
    fn default() -> Self {
        Deadlines { hook: Duration::from_secs(600), check: Duration::from_secs(60), unit: Duration::from_secs(300) }
    }
}

/// `script` under sh, killed (with everything it started) after `limit`;
/// exit status [`NodeExit::TimedOut`] then.
pub(crate) fn within(limit: Duration, script: &str) -> String {
    format!("timeout -k 10 {} sh -c {}", limit.as_secs().max(1), shell_quote(script))
}

pub(crate) fn status_text(status: u32, limit: Duration) -> String {
    if NodeExit::of(status) == NodeExit::TimedOut {
        format!("did not finish within {} s (its deadline) and was killed", limit.as_secs())
    } else {
        format!("exited with status {status}")
    }
}

/// The nodes a run holds, by name: where a delegated hook runs.
#[derive(Clone, Copy)]
pub struct Peers<'a, 'h>(pub &'a [(&'a str, &'a Node<'h>)]);

impl<'a, 'h> Peers<'a, 'h> {
    pub const NONE: Peers<'static, 'static> = Peers(&[]);

    fn get(&self, name: &str) -> Option<&'a Node<'h>> {
        self.0.iter().find(|(n, _)| *n == name).map(|(_, node)| *node)
    }
}

async fn run_hooks(
    node: &Node<'_>,
    peers: Peers<'_, '_>,
    phase: &str,
    hooks: &[Hook],
    when: When,
    limit: Duration,
    sink: &dyn Sink,
) -> Result<(), Fail> {
    let name = node.host().name();
    for h in hooks.iter().filter(|h| h.when == when) {
        let (runner, shown) = match h.delegate.as_deref().filter(|d| *d != name) {
            None => (node, h.name.clone()),
            Some(d) => match peers.get(d) {
                Some(peer) => (peer, format!("{} (on {d})", h.name)),
                None => {
                    let why = format!("hook {} runs on {d}, which this run does not hold", h.name);
                    return Err(Fail::msg(Some(phase), why));
                }
            },
        };
        // Guard and hook in one round trip; the marker tells a skip apart.
        let cmd = match &h.unless {
            Some(u) => format!(
                "if {} >/dev/null 2>&1; then echo {SKIPPED}; exit 0; fi; exec {}",
                within(limit, u),
                within(limit, &h.run)
            ),
            None => format!("exec {}", within(limit, &h.run)),
        };
        let out = runner.exec_held(&cmd).await.map_err(|e| Fail::msg(Some(phase), e.to_string()))?;
        if !out.success() {
            return Err(Fail {
                phase: Some(phase.to_string()),
                unit: None,
                message: format!("{} hook {shown} {}", when.as_str(), status_text(out.status, limit)),
                journal: Some(output_tail(&out)),
                cut_off: None,
            });
        }
        let skipped = out.stdout_str().trim() == SKIPPED;
        sink.emit(Event::HookRan { node: name.into(), phase: phase.to_string(), hook: shown, skipped });
    }
    Ok(())
}

async fn run_checks(
    node: &Node<'_>,
    phase: &str,
    checks: &[Check],
    limit: Duration,
    sink: &dyn Sink,
) -> Result<(), Fail> {
    let name = node.host().name();
    for c in checks {
        let mut waits = super::retry::waits(c.retries, c.delay);
        let mut tries = 0;
        let failed = loop {
            tries += 1;
            let out = node
                .exec_held(&format!("exec {}", within(limit, &c.run)))
                .await
                .map_err(|e| Fail::msg(Some(phase), e.to_string()))?;
            if out.success() {
                sink.emit(Event::CheckPassed {
                    node: name.into(),
                    phase: phase.to_string(),
                    check: c.name.clone(),
                    tries,
                });
                break None;
            }
            match waits.next() {
                Some(wait) => tokio::time::sleep(wait).await,
                None => break Some(out),
            }
        };
        if let Some(out) = failed {
            let how = if NodeExit::of(out.status) == NodeExit::TimedOut {
                format!(" (the last {})", status_text(out.status, limit))
            } else {
                String::new()
            };
            return Err(Fail {
                phase: Some(phase.to_string()),
                unit: None,
                message: format!("check {} failed after {tries} tries{how}", c.name),
                journal: Some(output_tail(&out)),
                cut_off: None,
            });
        }
    }
    Ok(())
}

/// Run unit operations; a failed unit becomes a [`Fail`] with its journal.
pub async fn unit_ops(node: &Node<'_>, phase: &str, ops: &[String], limit: Duration) -> Result<(), Fail> {
    match node.units_within(ops, Some(limit)).await {
        Ok(()) => Ok(()),
        Err(NodeError::UnitFailed { what, units, journal, .. }) => {
            let unit = units.into_iter().next();
            Err(Fail {
                phase: Some(phase.to_string()),
                unit,
                message: format!("systemctl failed ({what})"),
                journal: Some(journal),
                cut_off: None,
            })
        }
        Err(e) => Err(Fail::msg(Some(phase), e.to_string())),
    }
}

fn emit_units(sink: &dyn Sink, node: &str, phase: &str, plan: &UnitPlan) {
    for (action, list) in
        [("stop", &plan.stop), ("reload", &plan.reload), ("restart", &plan.restart), ("start", &plan.start)]
    {
        for u in list {
            sink.emit(Event::UnitAction {
                node: node.into(),
                phase: phase.into(),
                unit: u.clone(),
                action: action.into(),
            });
        }
    }
}

/// Run `step` forward: pre hooks (when it links a generation; reset hooks
/// when it unlinks one, which only a reset plan carries), stop what goes
/// away, flip the link, daemon-reload/enable/reload/restart/start,
/// post hooks, checks.
/// A step with a self-rollback deadline (`step.guard`) is armed on the
/// node before anything changes — with the way back of `earlier` too, the
/// node's steps this run did before it — and confirmed over a new
/// connection once its checks pass (see [`confirm`]).
pub async fn forward(
    node: &Node<'_>,
    peers: Peers<'_, '_>,
    step: &Step,
    earlier: &[&Step],
    d: &Deadlines,
    sink: &dyn Sink,
) -> Result<(), Fail> {
    let guard = step.armed();
    if let Some(within) = guard {
        let id = node.arming_id(&step.phase);
        let armed = armed_steps(step, earlier);
        node.arm(&id, within, &armed).await.map_err(|e| Fail::msg(Some(&step.phase), e))?;
    }
    apply(node, peers, step, d, sink).await?;
    check(node, step, d, sink).await?;
    match guard {
        Some(within) => confirm(node, step, within, sink).await,
        None => Ok(()),
    }
}

/// The deployer's confirmation of an armed step, over a new connection:
/// the change left the node reachable. Refused by the node (it answered),
/// an error like any other; no connection at all, a [`Fail`] that is
/// `cut_off`: the run then lets go of the node, which moves the phase back
/// by itself, rather than reach back through a connection opened before
/// the change (it may live on while no new one is possible).
pub async fn confirm(node: &Node<'_>, step: &Step, within: Duration, sink: &dyn Sink) -> Result<(), Fail> {
    let phase = Some(step.phase.as_str());
    match node.confirm(&node.arming_id(&step.phase)).await {
        Ok(()) => {
            sink.emit(Event::Confirmed { node: node.host().name().to_string(), phase: step.phase.clone() });
            Ok(())
        }
        Err(NodeError::Transport(e)) => Err(Fail {
            cut_off: Some(u32::try_from(within.as_secs()).unwrap_or(u32::MAX)),
            ..Fail::msg(
                phase,
                format!(
                    "took no new connection after the phase switched ({e}): the node moves it back by itself \
                     within {} s of this run letting go",
                    within.as_secs()
                ),
            )
        }),
        Err(e) => Err(Fail::msg(phase, e)),
    }
}

/// `step` forward up to its checks: pre hooks, units, link, post hooks.
/// A hook delegated to another node runs on that node of `peers`.
pub async fn apply(
    node: &Node<'_>,
    peers: Peers<'_, '_>,
    step: &Step,
    d: &Deadlines,
    sink: &dyn Sink,
) -> Result<(), Fail> {
    let linking = step.to.is_some();
    let before = if linking { When::Pre } else { When::Reset };
    run_hooks(node, peers, &step.phase, &step.hooks, before, d.hook, sink).await?;
    move_link(node, &step.phase, step.to, &step.units, d, sink).await?;
    if linking {
        run_hooks(node, peers, &step.phase, &step.hooks, When::Post, d.hook, sink).await?;
    }
    Ok(())
}

/// `step`'s checks (none when it unlinks its phase).
pub async fn check(node: &Node<'_>, step: &Step, d: &Deadlines, sink: &dyn Sink) -> Result<(), Fail> {
    if step.to.is_some() {
        run_checks(node, &step.phase, &step.checks, d.check, sink).await?;
    }
    Ok(())
}

/// Move `step`'s link back to where the run found it, restarting what the
/// way back needs restarted: `changed` holds every file the run changed on
/// this node (restart triggers may name files of other phases). No hooks.
pub async fn undo(
    node: &Node<'_>,
    step: &Step,
    changed: &BTreeSet<PathBuf>,
    d: &Deadlines,
    sink: &dyn Sink,
) -> Result<(), Fail> {
    if step.armed().is_some() {
        // taken back from the node's watchdog first (not armed: never
        // was, or confirmed already)
        match node.disarm(&node.arming_id(&step.phase)).await {
            Ok(()) | Err(NodeError::NotFound { .. }) => {}
            Err(e) => return Err(Fail::msg(Some(&step.phase), e)),
        }
    }
    move_link(node, &step.phase, step.from, &way_back(step, changed), d, sink).await
}

/// The way back of `step` and of the `earlier` ones, last first, as the
/// node's watchdog takes it (restart triggers on the way back may name a
/// file of any of them).
pub fn armed_steps(step: &Step, earlier: &[&Step]) -> Vec<ArmedStep> {
    let all: Vec<&Step> = earlier.iter().copied().chain([step]).collect();
    let changed = changed_by(all.iter().copied());
    all.iter()
        .rev()
        .map(|s| {
            let units = way_back(s, &changed);
            ArmedStep {
                phase: s.phase.clone(),
                from: s.from,
                before: units.before_switch(),
                after: units.after_switch(),
            }
        })
        .collect()
}

/// What systemd does when `step`'s link moves back to where the run found
/// it, `changed` holding the files the run changed on the node.
fn way_back(step: &Step, changed: &BTreeSet<PathBuf>) -> UnitPlan {
    let units = |m: &Option<Manifest>| m.as_ref().map_or(&[][..], |m| &m.units[..]).to_vec();
    plan_units(&units(&step.to_manifest), &units(&step.from_manifest), changed)
}

/// The files a node's `steps` change, for restart triggers on the way back.
pub fn changed_by<'s>(steps: impl IntoIterator<Item = &'s Step>) -> BTreeSet<PathBuf> {
    steps.into_iter().flat_map(|s| changed_files(s.from_manifest.as_ref(), s.to_manifest.as_ref())).collect()
}

async fn move_link(
    node: &Node<'_>,
    phase: &str,
    to: Option<u64>,
    units: &UnitPlan,
    d: &Deadlines,
    sink: &dyn Sink,
) -> Result<(), Fail> {
    unit_ops(node, phase, &units.before_switch(), d.unit).await?;
    node.switch(to, phase).await.map_err(|e| Fail::msg(Some(phase), e.to_string()))?;
    failpoint::hit("after-flip");
    unit_ops(node, phase, &units.after_switch(), d.unit).await?;
    failpoint::hit("after-units");
    emit_units(sink, node.host().name(), phase, units);
    Ok(())
}
