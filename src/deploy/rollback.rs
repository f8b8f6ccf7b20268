//! `rollback`: put every node back on the node generation a recorded
//! deployer generation (`.kdeploy/generations/<N>.json`) left it on — no
//! evaluation, no transfer: the nodes keep every staged generation with its
//! manifests and phase record, so the deployer needs only the record's
//! addresses and node generation numbers.
//!
//! The target is `--to N`, or else the generation before the one in effect
//! (the latest record, or what the latest record itself rolled back to: two
//! rollbacks in a row step back twice, they do not toggle).
//!
//! connect → open (node program, lock, `status`) → per node already on the
//! target: unchanged; otherwise read the target's phase record and the
//! manifests on both sides → the pure plan (`plan_rollback.rs`) → the
//! executor, as for `switch`: a failure moves the touched steps forward
//! again; success commits the target generation on each node and records
//! a new deployer generation with `rollbackOf`.

use std::collections::BTreeMap;
use std::path::PathBuf;

use futures::future::join_all;

use super::connect::{connect_reporting, lock_owner, SshSettings};
use super::events::{Event, Sink};
use super::execute::{self, Cancel, Context, Opened, Outcome, Reached};
use super::plan::{self, Plan};
use super::plan_rollback::{self as planner, NodeState};
use super::record::{self, Generation};
use super::rollout::{Group, Rollout, Serial};
use super::state;
use super::step::Deadlines;
use crate::store::Digest;
use crate::transport::Host;

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
    pub deadlines: Deadlines,
}

pub use planner::target;

/// Roll back. Returns the outcome, the deployer generation recorded (on
/// success) and, for `--dry-run`, the plan text.
pub async fn rollback(
    opts: &RollbackOptions,
    cancel: Cancel,
    sink: &dyn Sink,
) -> Result<(Outcome, Option<u64>, String), String> {
    let gens = record::list(&opts.state_dir);
    let tgt = target(&gens, opts.to)?;
    let latest = gens.last().cloned().expect("target found one");
    if let Some(why) = record::membership_refusal(&latest, &tgt) {
        return Err(why);
    }
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
            opts.ssh.target(n, &r.address, &r.ssh())
        })
        .collect::<Result<_, _>>()?;

    let (hosts, unreachable) = connect_reporting(&targets, opts.parallel, sink).await;
    let result = if unreachable {
        Ok((Outcome::Unreachable, None, String::new()))
    } else {
        let reached: Vec<Reached<'_>> = hosts.iter().map(|h| Reached { host: h, prefix: "" }).collect();
        match execute::open(&reached, &lock_owner("rollback"), sink).await {
            Err(session) => {
                session.close().await;
                Ok((Outcome::Failed, None, String::new()))
            }
            Ok(session) => {
                let r = plan_and_run(opts, &tgt, &latest, &session, cancel, sink).await;
                session.close().await;
                r
            }
        }
    };
    join_all(hosts.iter().map(|h| h.close())).await;
    result
}

async fn plan_and_run(
    opts: &RollbackOptions,
    tgt: &Generation,
    latest: &Generation,
    session: &execute::Session<'_>,
    cancel: Cancel,
    sink: &dyn Sink,
) -> Result<(Outcome, Option<u64>, String), String> {
    let plan = gather_and_plan(tgt, latest, &session.nodes, &opts.state_dir).await?;
    execute::announce(&plan, sink);
    if opts.dry_run {
        return Ok((Outcome::Ok, None, plan::render(&plan)));
    }
    let cx = Context {
        resolver: None,
        cache: None,
        state_dir: &opts.state_dir,
        cancel,
        deadlines: opts.deadlines,
        parallel: opts.parallel,
        uploads: 0,
    };
    let outcome = execute::execute(session, &plan, &cx, sink).await?;
    let number = plan.record.as_ref().map(|g| g.number).filter(|_| outcome == Outcome::Ok);
    Ok((outcome, number, String::new()))
}

/// Read each node's side of the rollback, then plan it.
async fn gather_and_plan(
    tgt: &Generation,
    latest: &Generation,
    nodes: &[Opened<'_>],
    state_dir: &std::path::Path,
) -> Result<Plan, String> {
    let read = join_all(nodes.iter().map(|o| async move {
        let r = &tgt.nodes[&o.name];
        let hash =
            Digest::parse(&r.hash).ok_or_else(|| format!("generation {}: bad hash for {}", tgt.number, o.name))?;
        let already =
            !o.status.pending && o.status.current.as_ref().is_some_and(|(g, h)| *g == r.generation && *h == hash);
        if already {
            let st = NodeState { links: o.status.phases.clone(), want: o.status.phases.clone(), ..Default::default() };
            return Ok((st, hash, already));
        }
        let want = planner::wanted(&state::read_record(&o.node, r.generation).await?);
        let deployed = state::read_deployed(&o.node, &o.status).await.map_err(|e| e.to_string())?;
        let mut target = BTreeMap::new();
        for (phase, g) in &want {
            if o.status.phases.get(phase) != Some(g) {
                target.insert(phase.clone(), o.node.manifest(*g, phase).await.map_err(|e| e.to_string())?);
            }
        }
        let st = NodeState { links: o.status.phases.clone(), want, live: deployed.manifests, target };
        Ok::<_, String>((st, hash, already))
    }))
    .await;
    let mut work = Vec::new();
    for (o, r) in nodes.iter().zip(read) {
        let (st, hash, already) = r?;
        let mut w = planner::node_work(&o.name, &st, tgt.nodes[&o.name].generation, hash, already);
        // Generations recorded before rollouts: one node at a time.
        w.rollout =
            Some(tgt.nodes[&o.name].rollout.unwrap_or(Rollout { group: Group::Workers, serial: Serial::Count(1) }));
        work.push(w);
    }
    let waves = plan::waves(&tgt.phase_order, &work, &[]);
    let mut records = latest.nodes.clone();
    for o in nodes {
        records.insert(o.name.clone(), tgt.nodes[&o.name].clone());
    }
    let record = Generation {
        number: record::next_number(state_dir),
        cluster: tgt.cluster.clone(),
        time: record::now(),
        phase_order: tgt.phase_order.clone(),
        rollback_of: Some(tgt.number),
        kubernetes_version: tgt.kubernetes_version.clone(),
        members: tgt.members.clone(),
        anchor: tgt.anchor.clone(),
        nodes: records,
    };
    Ok(Plan { nodes: work, waves, record: Some(record) })
}
