//! Activating one phase on one node, and switching one back: hooks (with
//! their `unless` guards), the unit operations `node::plan` decided, the
//! phase link flip, checks with retries. Every step reports through the
//! [`Sink`]; a failure comes back as a [`Fail`] naming phase, unit and the
//! unit's last journal lines.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::time::Duration;

use super::events::{Event, Sink};
use super::plan::{PhaseAction, PhasePlan};
use crate::closure::{Phase, When};
use crate::node::{plan_units, Manifest, Node, NodeError, UnitPlan};
use crate::transport::shell_quote;

/// Why a phase failed on a node.
#[derive(Debug, Clone)]
pub struct Fail {
    pub phase: Option<String>,
    pub unit: Option<String>,
    pub message: String,
    pub journal: Option<String>,
}

impl Fail {
    pub fn msg(phase: Option<&str>, message: impl Into<String>) -> Fail {
        Fail { phase: phase.map(str::to_string), unit: None, message: message.into(), journal: None }
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

fn output_tail(out: &crate::transport::Output) -> String {
    let mut s = String::from_utf8_lossy(&out.stdout).into_owned();
    s += &String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = s.trim_end().lines().collect();
    lines[lines.len().saturating_sub(20)..].join("\n")
}

async fn run_hooks(node: &Node<'_>, phase: &Phase, when: When, sink: &dyn Sink) -> Result<(), Fail> {
    let name = node.host().name();
    for h in phase.hooks.iter().filter(|h| h.when == when) {
        // Guard and hook in one round trip; the marker tells a skip apart.
        let cmd = match &h.unless {
            Some(u) => format!(
                "if sh -c {} >/dev/null 2>&1; then echo {SKIPPED}; exit 0; fi; exec sh -c {}",
                shell_quote(u),
                shell_quote(&h.run)
            ),
            None => format!("exec sh -c {}", shell_quote(&h.run)),
        };
        let out = node.host().exec(&cmd, None).await.map_err(|e| Fail::msg(Some(&phase.name), e.to_string()))?;
        if !out.success() {
            return Err(Fail {
                phase: Some(phase.name.clone()),
                unit: None,
                message: format!("{} hook {} exited with status {}", when.as_str(), h.name, out.status),
                journal: Some(output_tail(&out)),
            });
        }
        let skipped = out.stdout_str().trim() == SKIPPED;
        sink.emit(Event::HookRan { node: name.into(), phase: phase.name.clone(), hook: h.name.clone(), skipped });
    }
    Ok(())
}

async fn run_checks(node: &Node<'_>, phase: &Phase, sink: &dyn Sink) -> Result<(), Fail> {
    let name = node.host().name();
    for c in &phase.checks {
        let tries = c.retries + 1;
        let mut last = None;
        for t in 1..=tries {
            let out = node
                .host()
                .exec(&format!("exec sh -c {}", shell_quote(&c.run)), None)
                .await
                .map_err(|e| Fail::msg(Some(&phase.name), e.to_string()))?;
            if out.success() {
                sink.emit(Event::CheckPassed {
                    node: name.into(),
                    phase: phase.name.clone(),
                    check: c.name.clone(),
                    tries: t,
                });
                last = None;
                break;
            }
            last = Some(out);
            if t < tries {
                tokio::time::sleep(Duration::from_secs(c.delay.into())).await;
            }
        }
        if let Some(out) = last {
            return Err(Fail {
                phase: Some(phase.name.clone()),
                unit: None,
                message: format!("check {} failed after {tries} tries", c.name),
                journal: Some(output_tail(&out)),
            });
        }
    }
    Ok(())
}

/// Run unit operations; a failed unit becomes a [`Fail`] with its journal.
pub async fn unit_ops(node: &Node<'_>, phase: &str, ops: &[String]) -> Result<(), Fail> {
    match node.units(ops).await {
        Ok(()) => Ok(()),
        Err(NodeError::UnitFailed { what, journal, .. }) => {
            let unit = journal
                .lines()
                .find_map(|l| l.strip_prefix("kdeploy-node: unit ").and_then(|r| r.split(' ').next()))
                .map(str::to_string);
            Err(Fail {
                phase: Some(phase.to_string()),
                unit,
                message: format!("systemctl failed ({what})"),
                journal: Some(journal),
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

/// Activate (or remove) one phase on one node as planned: pre hooks, stop
/// what goes away, flip the link, daemon-reload/start/restart/reload, post
/// hooks, checks. `phase` is `None` for a phase no longer in the closure.
pub async fn activate(
    node: &Node<'_>,
    phase: Option<&Phase>,
    plan: &PhasePlan,
    gen: u64,
    sink: &dyn Sink,
) -> Result<(), Fail> {
    let name = &plan.name;
    let to = if plan.action == PhaseAction::Activate { Some(gen) } else { None };
    if let (Some(p), Some(_)) = (phase, to) {
        run_hooks(node, p, When::Pre, sink).await?;
    }
    unit_ops(node, name, &plan.units.before_switch()).await?;
    node.switch(to, name).await.map_err(|e| Fail::msg(Some(name), e.to_string()))?;
    unit_ops(node, name, &plan.units.after_switch()).await?;
    emit_units(sink, node.host().name(), name, &plan.units);
    if let (Some(p), Some(_)) = (phase, to) {
        run_hooks(node, p, When::Post, sink).await?;
        run_checks(node, p, sink).await?;
    }
    Ok(())
}

/// Switch `phase` from the manifest `from` (live now) to generation `to`
/// with manifest `to_manifest` (`None`: unlink), restarting what the change
/// back needs restarted. No hooks, no checks: used by rollbacks.
pub async fn switch_back(
    node: &Node<'_>,
    phase: &str,
    from: Option<&Manifest>,
    to: Option<u64>,
    to_manifest: Option<&Manifest>,
    changed: &BTreeSet<PathBuf>,
    sink: &dyn Sink,
) -> Result<(), Fail> {
    let plan =
        plan_units(from.map_or(&[][..], |m| &m.units[..]), to_manifest.map_or(&[][..], |m| &m.units[..]), changed);
    unit_ops(node, phase, &plan.before_switch()).await?;
    node.rollback_phase(phase, to).await.map_err(|e| Fail::msg(Some(phase), e.to_string()))?;
    unit_ops(node, phase, &plan.after_switch()).await?;
    emit_units(sink, node.host().name(), phase, &plan);
    Ok(())
}
