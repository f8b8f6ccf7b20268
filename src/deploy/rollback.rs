//! `rollback`: put every node back on the node generation a recorded
//! deployer generation (`.kdeploy/generations/<N>.json`) left it on — no
//! evaluation, no transfer: the nodes keep every staged generation with its
//! manifests and phase record (`state.rs`), so the deployer needs only the
//! record's addresses and node generation numbers.
//!
//! The target is `--to N`, or else the generation before the one in effect
//! (the latest record, or what the latest record itself rolled back to: two
//! rollbacks in a row step back twice, they do not toggle).
//!
//! Per node: connect, lock, `status`; committed (generation, hash) equal to
//! the target: unchanged. Otherwise read the target's phase record and the
//! live manifests and compute one step per phase whose link must move.
//! Phases that get (another) generation switch in phase order, all nodes
//! concurrently per phase with a barrier; phases that go away are unlinked
//! after them, last phase first. Each step is [`apply::switch_back`]: units
//! stopped/started/restarted as `node::plan_units` decides from the two
//! manifests and every file the rollback changes; no hooks, no checks (they
//! live in the closure, which a rollback does not evaluate). A failure
//! switches the touched steps forward again (reverse order) and stops.
//! Success: commit the target generation on each node and record a new
//! deployer generation with `rollbackOf`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use futures::future::join_all;

use super::apply::{self, Fail};
use super::connect::{connect_reporting, lock_owner, SshSettings};
use super::events::{Event, Sink};
use super::record::{self, Generation};
use super::run::Outcome;
use super::state;
use super::wave;
use crate::node::{changed_files, Manifest, Node, NodeLock, NodeStatus};
use crate::transport::{Host, SshHost};

#[derive(Debug, Clone, Default)]
pub struct RollbackOptions {
    /// The deployer generation to return to; `None`: the previous one.
    pub to: Option<u64>,
    /// Node names; empty: every node of the target generation.
    pub on: Vec<String>,
    pub parallel: usize,
    pub ssh: SshSettings,
    pub state_dir: PathBuf,
    pub dry_run: bool,
}

/// The recorded generation to return to: `to`, or the last one before the
/// generation in effect now.
pub fn target(gens: &[Generation], to: Option<u64>) -> Result<Generation, String> {
    let latest = gens.last().ok_or("no generations recorded yet (.kdeploy/generations/ is empty)")?;
    if let Some(n) = to {
        return gens.iter().find(|g| g.number == n).cloned().ok_or_else(|| {
            let have: Vec<String> = gens.iter().map(|g| g.number.to_string()).collect();
            format!("--to {n}: no such recorded generation (have {})", have.join(", "))
        });
    }
    let in_effect = latest.rollback_of.unwrap_or(latest.number);
    gens.iter()
        .rev()
        .find(|g| g.number < in_effect)
        .cloned()
        .ok_or_else(|| format!("generation {in_effect} is the oldest recorded: nothing to roll back to"))
}

/// One phase link to move on one node.
#[derive(Debug, Clone)]
pub struct Step {
    pub phase: String,
    pub from: Option<u64>,
    pub to: Option<u64>,
    pub from_manifest: Option<Manifest>,
    pub to_manifest: Option<Manifest>,
}

/// Which links move: `links` now, `want` the target (phase → generation).
pub fn steps(links: &BTreeMap<String, u64>, want: &BTreeMap<String, u64>) -> Vec<(String, Option<u64>, Option<u64>)> {
    let names: BTreeSet<&String> = links.keys().chain(want.keys()).collect();
    names
        .into_iter()
        .filter_map(|p| {
            let (a, b) = (links.get(p).copied(), want.get(p).copied());
            (a != b).then(|| (p.clone(), a, b))
        })
        .collect()
}

/// Run order: phases switched to a generation in `order` (unknown ones
/// after, by name), then phases unlinked, in reverse of that order.
pub fn run_order(order: &[String], steps: &[(String, Option<u64>, Option<u64>)]) -> Vec<String> {
    let mut all: Vec<String> = order.to_vec();
    let mut extra: Vec<String> = steps.iter().map(|s| s.0.clone()).filter(|p| !order.contains(p)).collect();
    extra.sort();
    extra.dedup();
    all.extend(extra);
    let linked: Vec<String> =
        all.iter().filter(|p| steps.iter().any(|s| &s.0 == *p && s.2.is_some())).cloned().collect();
    let unlinked: Vec<String> =
        all.iter().rev().filter(|p| steps.iter().any(|s| &s.0 == *p && s.2.is_none())).cloned().collect();
    linked.into_iter().chain(unlinked).collect()
}

struct Held<'h> {
    name: String,
    node: Node<'h>,
    lock: NodeLock,
    status: NodeStatus,
    gen: u64,
    hash: String,
    steps: Vec<Step>,
    changed: BTreeSet<PathBuf>,
}

impl Held<'_> {
    fn unchanged(&self) -> bool {
        self.status.current.as_ref().is_some_and(|(g, h)| *g == self.gen && *h == self.hash) && self.steps.is_empty()
    }

    /// Switches step `k`'s phase to the rollback target, or with `undo`
    /// back to where this run found it.
    async fn switch_step(&self, k: usize, undo: bool, sink: &dyn Sink) -> Result<(), Fail> {
        let s = &self.steps[k];
        let (from, to, to_manifest) = if undo {
            (s.to_manifest.as_ref(), s.from, s.from_manifest.as_ref())
        } else {
            (s.from_manifest.as_ref(), s.to, s.to_manifest.as_ref())
        };
        apply::switch_back(&self.node, &s.phase, from, to, to_manifest, &self.changed, sink).await
    }
}

/// Read what a node must do to return to generation `gen` (two round trips
/// plus one per target manifest).
async fn plan_node(node: &Node<'_>, status: &NodeStatus, gen: u64) -> Result<(Vec<Step>, BTreeSet<PathBuf>), String> {
    let rec = state::read_record(node, gen).await?;
    let want: BTreeMap<String, u64> =
        rec.iter().filter(|(_, r)| r.active).map(|(p, r)| (p.clone(), r.generation)).collect();
    let moves = steps(&status.phases, &want);
    if moves.is_empty() {
        return Ok((Vec::new(), BTreeSet::new()));
    }
    let deployed = state::read_deployed(node, status).await.map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    let mut changed = BTreeSet::new();
    for (phase, from, to) in moves {
        let from_manifest = from.and_then(|_| deployed.manifests.get(&phase).cloned());
        let to_manifest = match to {
            Some(g) => Some(node.manifest(g, &phase).await.map_err(|e| e.to_string())?),
            None => None,
        };
        changed.extend(changed_files(from_manifest.as_ref(), to_manifest.as_ref()));
        out.push(Step { phase, from, to, from_manifest, to_manifest });
    }
    Ok((out, changed))
}

/// The plan text for `--dry-run`.
fn plan_text(h: &Held<'_>) -> String {
    if h.unchanged() {
        return format!("{}: unchanged (already on node generation {})\n", h.name, h.gen);
    }
    let mut s = format!("{}: to node generation {}\n", h.name, h.gen);
    let g = |x: Option<u64>| x.map_or("none".to_string(), |g| g.to_string());
    for st in &h.steps {
        s += &format!("  {} : {} -> {}\n", st.phase, g(st.from), g(st.to));
    }
    s
}

/// Roll back. Returns the outcome, the deployer generation recorded (on
/// success) and, for `--dry-run`, the plan text.
pub async fn rollback(opts: &RollbackOptions, sink: &dyn Sink) -> Result<(Outcome, Option<u64>, String), String> {
    let gens = record::list(&opts.state_dir);
    let tgt = target(&gens, opts.to)?;
    let latest = gens.last().cloned().expect("target found one");
    let mut names: Vec<String> = tgt.nodes.keys().cloned().collect();
    if !opts.on.is_empty() {
        let want: Vec<&str> = opts.on.iter().flat_map(|s| s.split(',')).filter(|s| !s.is_empty()).collect();
        if let Some(w) = want.iter().find(|w| !tgt.nodes.contains_key(**w)) {
            return Err(format!("--on {w}: no node of that name in generation {}", tgt.number));
        }
        names.retain(|n| want.contains(&n.as_str()));
    }
    for n in latest.nodes.keys().filter(|n| !tgt.nodes.contains_key(*n)) {
        sink.emit(Event::Warning {
            node: n.clone(),
            message: format!("not in generation {}: left as it is", tgt.number),
        });
    }
    let targets: Vec<_> = names
        .iter()
        .map(|n| {
            let r = &tgt.nodes[n];
            opts.ssh.target(n, &r.address, &r.user, r.port, r.key.as_deref(), r.jump_host.as_deref())
        })
        .collect::<Result<_, _>>()?;

    // 1. connect
    let (hosts, unreachable) = connect_reporting(&targets, opts.parallel, sink).await;

    // 2. install, lock, status, plan
    let owner = lock_owner("rollback");
    let opened = join_all(hosts.iter().map(|h| {
        let owner = &owner;
        let r = &tgt.nodes[h.name()];
        async move {
            let h: &dyn Host = h;
            let node = Node::install(h).await.map_err(|e| Fail::msg(None, e.to_string()))?;
            let lock = node.lock(owner).await.map_err(|e| Fail::msg(None, e.to_string()))?;
            let status = node.status().await.map_err(|e| Fail::msg(None, e.to_string()))?;
            let (steps, changed) = if status.current.as_ref().is_some_and(|(g, hh)| *g == r.generation && *hh == r.hash)
            {
                (Vec::new(), BTreeSet::new())
            } else {
                plan_node(&node, &status, r.generation).await.map_err(|e| Fail::msg(None, e))?
            };
            Ok::<_, Fail>(Held {
                name: h.name().to_string(),
                node,
                lock,
                status,
                gen: r.generation,
                hash: r.hash.clone(),
                steps,
                changed,
            })
        }
    }))
    .await;
    let mut held: Vec<Held<'_>> = Vec::new();
    let mut failed = false;
    for (h, r) in hosts.iter().zip(opened) {
        match r {
            Ok(x) => held.push(x),
            Err(f) => {
                failed = true;
                sink.emit(f.event(h.name()));
            }
        }
    }
    if unreachable || failed {
        release(held, &hosts).await;
        return Ok((if unreachable { Outcome::Unreachable } else { Outcome::Failed }, None, String::new()));
    }
    for h in &held {
        if h.unchanged() {
            sink.emit(Event::NodeUnchanged { node: h.name.clone() });
        } else {
            let pick = |to: bool| h.steps.iter().filter(|s| s.to.is_some() == to).map(|s| s.phase.clone()).collect();
            sink.emit(Event::NodeChanged {
                node: h.name.clone(),
                activate: pick(true),
                stage: Vec::new(),
                remove: pick(false),
            });
        }
    }
    if opts.dry_run {
        let text = held.iter().map(plan_text).collect();
        release(held, &hosts).await;
        return Ok((Outcome::Ok, None, text));
    }

    // 3. phase by phase, barrier between phases
    let all: Vec<_> = held.iter().flat_map(|h| h.steps.iter().map(|s| (s.phase.clone(), s.from, s.to))).collect();
    let order = run_order(&tgt.phase_order, &all);
    let mut touched = wave::Touched::new();
    for phase in &order {
        let on: Vec<(usize, usize)> = held
            .iter()
            .enumerate()
            .filter_map(|(i, h)| h.steps.iter().position(|s| &s.phase == phase).map(|k| (i, k)))
            .collect();
        if on.is_empty() {
            continue;
        }
        let name = |i: usize| held[i].name.clone();
        failed =
            wave::run_phase(phase, &on, name, &mut touched, sink, |i, k| held[i].switch_step(k, false, sink)).await;
        if failed {
            break;
        }
    }
    if failed {
        // forward again: every touched step undone, last first
        join_all(touched.iter().map(|(&i, ks)| {
            let h = &held[i];
            async move {
                for &k in ks.iter().rev() {
                    let s = &h.steps[k];
                    let r = h.switch_step(k, true, sink).await;
                    match r {
                        Ok(()) => sink.emit(Event::RolledBack { node: h.name.clone(), phase: s.phase.clone() }),
                        Err(f) => sink.emit(Event::RollbackFailed {
                            node: h.name.clone(),
                            phase: s.phase.clone(),
                            message: format!(
                                "{}{}",
                                f.message,
                                f.journal.map(|j| format!("\n{j}")).unwrap_or_default()
                            ),
                        }),
                    }
                }
            }
        }))
        .await;
        release(held, &hosts).await;
        return Ok((Outcome::Failed, None, String::new()));
    }

    // 4. commit the target generation on changed nodes, then record
    let commits = join_all(
        held.iter()
            .filter(|h| !h.unchanged())
            .map(|h| async move { (h, h.node.commit(h.gen, &h.hash).await.map_err(|e| e.to_string())) }),
    )
    .await;
    for (h, r) in commits {
        match r {
            Ok(()) => sink.emit(Event::Committed { node: h.name.clone(), generation: h.gen }),
            Err(e) => {
                failed = true;
                sink.emit(Fail::msg(None, e).event(&h.name));
            }
        }
    }
    let mut nodes = latest.nodes.clone();
    for h in &held {
        nodes.insert(h.name.clone(), tgt.nodes[&h.name].clone());
    }
    let number = record::next_number(&opts.state_dir);
    record::write(
        &opts.state_dir,
        &Generation {
            number,
            cluster: tgt.cluster.clone(),
            time: record::now(),
            phase_order: tgt.phase_order.clone(),
            rollback_of: Some(tgt.number),
            nodes,
        },
    )?;
    release(held, &hosts).await;
    Ok((if failed { Outcome::Failed } else { Outcome::Ok }, Some(number), String::new()))
}

async fn release(held: Vec<Held<'_>>, hosts: &[SshHost]) {
    join_all(held.into_iter().map(|h| h.lock.release())).await;
    join_all(hosts.iter().map(|h| h.close())).await;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gen(number: u64, rollback_of: Option<u64>) -> Generation {
        Generation { number, cluster: "c".into(), time: 0, phase_order: vec![], rollback_of, nodes: BTreeMap::new() }
    }

    #[test]
    fn target_is_previous_of_generation_in_effect() {
        let gs = vec![gen(1, None), gen(2, None), gen(3, None)];
        assert_eq!(target(&gs, None).unwrap().number, 2);
        assert_eq!(target(&gs, Some(1)).unwrap().number, 1);
        assert!(target(&gs, Some(9)).is_err());
        let gs = vec![gen(1, None), gen(2, None), gen(3, None), gen(4, Some(2))];
        assert_eq!(target(&gs, None).unwrap().number, 1);
        assert!(target(&[gen(1, None)], None).is_err());
        assert!(target(&[], None).is_err());
    }

    #[test]
    fn steps_and_order() {
        let links: BTreeMap<String, u64> = [("a", 3), ("b", 3), ("c", 3)].map(|(k, v)| (k.to_string(), v)).into();
        let want: BTreeMap<String, u64> = [("a", 3), ("b", 2), ("d", 1)].map(|(k, v)| (k.to_string(), v)).into();
        let s = steps(&links, &want);
        assert_eq!(s, vec![("b".into(), Some(3), Some(2)), ("c".into(), Some(3), None), ("d".into(), None, Some(1))]);
        let order: Vec<String> = ["a", "b", "c", "d"].map(String::from).into();
        assert_eq!(run_order(&order, &s), ["b", "d", "c"]);
    }
}
