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

use futures::future::join_all;

use super::connect::SshSettings;
use super::error::{Error, RecordsError};
use super::events::{Event, Sink};
use super::execute::{Cancel, Opened, Session};
use super::operation::{self, Operation, Report, RunOptions};
use super::plan::{self, Plan};
use super::plan_rollback::{self as planner, NodeState};
use super::record::{self, Generation, Records};
use super::select;
use super::state;
use crate::store::Digest;
use crate::transport::NodeTarget;

#[derive(Debug, Clone, Default)]
pub struct RollbackOptions {
    /// The deployer generation to return to; `None`: the previous one.
    pub to: Option<u64>,
    /// Node names; empty: every node of the target generation.
    pub on: Vec<String>,
    pub run: RunOptions,
}

pub use planner::target;

/// A rollback: the operation the spine runs.
pub struct Rollback<'a> {
    pub opts: &'a RollbackOptions,
}

impl Rollback<'_> {
    /// The generation to return to and the latest one, or why not.
    fn ends<'r>(&self, records: &'r Records) -> Result<(&'r Generation, &'r Generation), Error> {
        let tgt = target(records.all(), self.opts.to)?;
        let latest = records.latest().ok_or(RecordsError::Empty)?;
        if let Some(why) = record::membership_refusal(latest, tgt) {
            return Err(why.into());
        }
        Ok((tgt, latest))
    }
}

impl Operation for Rollback<'_> {
    const NAME: &'static str = "rollback";

    fn targets(&self, records: &Records, ssh: &SshSettings, sink: &dyn Sink) -> Result<Vec<NodeTarget>, Error> {
        let (tgt, latest) = self.ends(records)?;
        let names = select::in_generation(tgt, &self.opts.on)?;
        for n in latest.nodes.keys().filter(|n| !tgt.nodes.contains_key(*n)) {
            sink.emit(Event::Warning {
                node: n.clone(),
                message: format!("not in generation {}: left as it is", tgt.number),
            });
        }
        names.iter().map(|n| ssh.target(n, &tgt.nodes[n].address, &tgt.nodes[n].ssh())).collect()
    }

    async fn plan(&self, records: &Records, session: &Session<'_>, _: &dyn Sink) -> Result<Plan, Error> {
        let (tgt, latest) = self.ends(records)?;
        gather_and_plan(tgt, latest, &session.nodes, records.next_number()).await
    }
}

/// Roll back: connect to the target generation's nodes, plan, run.
pub async fn rollback(opts: &RollbackOptions, cancel: Cancel, sink: &dyn Sink) -> Result<Report, Error> {
    operation::run(&Rollback { opts }, &opts.run, cancel, sink).await
}

/// [`rollback`] with the records the caller read already.
pub async fn rollback_with(
    opts: &RollbackOptions,
    records: &Records,
    cancel: Cancel,
    sink: &dyn Sink,
) -> Result<Report, Error> {
    operation::run_with(&Rollback { opts }, &opts.run, records, cancel, sink).await
}

/// Read each node's side of the rollback, then plan it.
async fn gather_and_plan(
    tgt: &Generation,
    latest: &Generation,
    nodes: &[Opened<'_>],
    number: u64,
) -> Result<Plan, Error> {
    let read = join_all(nodes.iter().map(|o| async move {
        let r = &tgt.nodes[&o.name];
        let bad_hash = || Error::BadRecordedHash { generation: tgt.number, node: o.name.clone() };
        let hash = Digest::parse(&r.hash).ok_or_else(bad_hash)?;
        let already =
            !o.status.pending && o.status.current.as_ref().is_some_and(|(g, h)| *g == r.generation && *h == hash);
        if already {
            let st = NodeState { links: o.status.phases.clone(), want: o.status.phases.clone(), ..Default::default() };
            return Ok((st, hash, already));
        }
        let want = planner::wanted(&state::read_record(&o.node, r.generation).await?);
        let deployed = state::read_deployed(&o.node, &o.status).await?;
        let mut target = BTreeMap::new();
        for (phase, g) in &want {
            if o.status.phases.get(phase) != Some(g) {
                target.insert(phase.clone(), o.node.manifest(*g, phase).await?);
            }
        }
        let st = NodeState { links: o.status.phases.clone(), want, live: deployed.manifests, target };
        Ok::<_, Error>((st, hash, already))
    }))
    .await;
    let mut work = Vec::new();
    for (o, r) in nodes.iter().zip(read) {
        let (st, hash, already) = r?;
        let mut w = planner::node_work(&o.name, &st, tgt.nodes[&o.name].generation, hash, already);
        // Generations recorded before rollouts: one node at a time.
        w.rollout = Some(tgt.nodes[&o.name].rollout.unwrap_or_default());
        work.push(w);
    }
    let waves = plan::waves(&tgt.phase_order, &work, &[]);
    let mut records = latest.nodes.clone();
    for o in nodes {
        records.insert(o.name.clone(), tgt.nodes[&o.name].clone());
    }
    let record = Generation {
        number,
        cluster: tgt.cluster.clone(),
        time: record::now(),
        phase_order: tgt.phase_order.clone(),
        rollback_of: Some(tgt.number),
        kubernetes_version: tgt.kubernetes_version.clone(),
        members: tgt.members.clone(),
        anchor: tgt.anchor.clone(),
        nodes: records,
        gone: latest.gone.clone(),
    };
    Ok(Plan { nodes: work, waves, record: Some(record), snapshots: Vec::new(), removals: Vec::new() })
}
