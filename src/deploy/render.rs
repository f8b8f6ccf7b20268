//! Plain progress lines from events, one per event worth a person's
//! attention, written to stderr so stdout stays free for the recap (and
//! its JSON form). `[node] phase: what` — greppable, and readable in CI
//! logs where live progress bars would be noise. Every line goes through
//! [`shown`]: events carry what nodes said (journals, drift, errors).

use std::io::Write;
use std::sync::Mutex;

use super::events::{Event, Sink};
use crate::shown::shown;

pub struct Lines<W: Write + Send> {
    out: Mutex<W>,
    /// Also show per-unit, per-hook and per-check lines.
    pub verbose: bool,
}

impl<W: Write + Send> Lines<W> {
    pub fn new(out: W, verbose: bool) -> Self {
        Lines { out: Mutex::new(out), verbose }
    }
}

fn secs(d: std::time::Duration) -> String {
    format!("{:.2} s", d.as_secs_f64())
}

fn mb(bytes: u64) -> String {
    format!("{:.1} MB", bytes as f64 / 1e6)
}

/// " (X MB compressed)" when fewer bytes went on the wire than the blobs hold.
pub(super) fn compressed(bytes: u64, sent: u64) -> String {
    match sent < bytes {
        true => format!(" ({} compressed)", mb(sent)),
        false => String::new(),
    }
}

/// The line an event is shown as (`None`: not worth one), its controls
/// shown escaped.
pub fn line(e: &Event, verbose: bool) -> Option<String> {
    text(e, verbose).map(|l| shown(&l).into_owned())
}

fn text(e: &Event, verbose: bool) -> Option<String> {
    Some(match e {
        Event::Evaluated { nodes, took, kept: false } => format!("evaluated: {nodes} node(s) in {}", secs(*took)),
        Event::Evaluated { nodes, took, kept: true } => {
            format!("evaluated: {nodes} node(s) in {} (unchanged since the last evaluation: kept)", secs(*took))
        }
        Event::NodeConnected { node } if verbose => format!("[{node}] connected"),
        Event::NodeUnreachable { node, reason } => format!("[{node}] UNREACHABLE: {reason}"),
        Event::NodeSkipped { node, behind } => format!("[{node}] {}", super::events::skipped_note(*behind)),
        Event::NodeUnchanged { node } => format!("[{node}] unchanged"),
        Event::NodeChanged { node, activate, stage, remove } => {
            let mut s = format!(
                "[{node}] changed: activate {}",
                if activate.is_empty() { "-".into() } else { activate.join(", ") }
            );
            if !stage.is_empty() {
                s += &format!("; stage only {}", stage.join(", "));
            }
            if !remove.is_empty() {
                s += &format!("; remove {}", remove.join(", "));
            }
            s
        }
        Event::BlobsPushed { node, count, bytes, sent, fetched: 0, took, .. } => {
            format!("[{node}] pushed {count} blob(s), {}{} in {}", mb(*bytes), compressed(*bytes, *sent), secs(*took))
        }
        Event::BlobsPushed { node, count, bytes, sent, fetched, fetched_bytes, took } => format!(
            "[{node}] fetched {fetched} blob(s), {} from the cache; pushed {count}, {}{}; in {}",
            mb(*fetched_bytes),
            mb(*bytes),
            compressed(*bytes, *sent),
            secs(*took)
        ),
        Event::Transferred { nodes, took } => {
            format!("transfer: {nodes} node(s) hold their blobs after {}", secs(*took))
        }
        Event::Staged { node, phases, files, took } if verbose => {
            format!("[{node}] staged {phases} phase(s), {files} file(s) in {}", secs(*took))
        }
        Event::CacheUploaded { blob, bytes, took } if verbose => {
            format!("cache: uploaded {}, {} in {}", &blob[..12], mb(*bytes), secs(*took))
        }
        Event::Upgrading { from, to } => {
            format!("upgrade: Kubernetes {from} -> {to}: the control plane before the kubelets")
        }
        Event::PhaseStarted { phase, nodes } => format!("== {phase} on {}", nodes.join(", ")),
        Event::BatchStarted { phase, batch, of, nodes } if nodes.is_empty() => {
            format!("== {phase}: batch {batch} of {of} (a membership change alone)")
        }
        Event::BatchStarted { phase, batch, of, nodes } => {
            format!("== {phase}: batch {batch} of {of} on {}", nodes.join(", "))
        }
        Event::Member { membership, member, what, via } => format!("[{via}] {membership}: member {member} {what}"),
        Event::Snapshot { membership, node, path, bytes, removed } => format!(
            "[{node}] {membership}: snapshot of {} kept in {}{}",
            if *bytes < 1_000_000 { format!("{:.1} kB", *bytes as f64 / 1e3) } else { mb(*bytes) },
            path.display(),
            if *removed > 0 { format!(" ({removed} older removed)") } else { String::new() }
        ),
        Event::NodePhaseFinished { node, phase, took } => format!("[{node}] {phase}: done in {}", secs(*took)),
        Event::PhaseFinished { phase, took } => format!("== {phase} finished in {}", secs(*took)),
        Event::UnitAction { node, phase, unit, action } => format!("[{node}] {phase}: {action} {unit}"),
        Event::HookRan { node, phase, hook, skipped } if verbose || !skipped => {
            format!("[{node}] {phase}: hook {hook}{}", if *skipped { " skipped (guard)" } else { "" })
        }
        Event::CheckPassed { node, phase, check, tries } if verbose => {
            format!("[{node}] {phase}: check {check} passed (try {tries})")
        }
        Event::Failed { node, phase, unit, message, journal } => {
            let mut s = format!("[{node}] FAILED");
            if let Some(p) = phase {
                s += &format!(" in phase {p}");
            }
            if let Some(u) = unit {
                s += &format!(", unit {u}");
            }
            s += &format!(": {message}");
            if let Some(j) = journal {
                s += "\n  last journal lines:";
                for l in j.lines() {
                    s += &format!("\n    {l}");
                }
            }
            s
        }
        Event::RolledBack { node, phase } => format!("[{node}] {phase}: rolled back"),
        Event::Confirmed { node, phase } => format!("[{node}] {phase}: confirmed over a new connection"),
        Event::SelfRolledBack { node, rollback } => format!("[{node}] the node rolled back by itself: {rollback}"),
        Event::RollbackFailed { node, phase, message } => format!("[{node}] {phase}: ROLLBACK FAILED: {message}"),
        Event::Warning { node, message } => format!("[{node}] warning: {}", message.lines().next().unwrap_or("")),
        Event::Committed { node, generation } => format!("[{node}] committed generation {generation}"),
        Event::Drift { node, phase, kind, what, why } => format!("[{node}] drift in {phase}: {kind} {what} {why}"),
        Event::Interrupted => "interrupted: no new work starts; putting touched nodes back".to_string(),
        Event::NodeGone { node, via } => format!(
            "[{node}] removed without reaching it{}: reset by the next switch that reaches it",
            via.as_ref().map(|v| format!(" (deleted from the cluster's API on {v})")).unwrap_or_default()
        ),
        Event::NodeLeft { node, address } => format!(
            "[{node}] not in the definition any more ({address}): left as it is; `kdeploy switch --prune` removes it"
        ),
        Event::NodeReset { node, removed } => {
            format!("[{node}] reset: kdeploy's state and {} directory(ies) it created removed", removed.len())
        }
        _ => return None,
    })
}

impl<W: Write + Send> Sink for Lines<W> {
    fn emit(&self, e: Event) {
        if let Some(l) = line(&e, self.verbose) {
            let mut o = self.out.lock().unwrap_or_else(|p| p.into_inner());
            let _ = writeln!(o, "{l}");
            let _ = o.flush();
        }
    }
}
