//! `gc`: remove what no one can go back to any more — old deployer
//! records, old node generations and the blobs only they used, on the
//! nodes and in the deployer's store.
//!
//! connect every node of the latest record → open each (node program,
//! lock: never while a switch or rollback runs there; `status`) → decide:
//! the deployer records of this cluster to drop ([`records_to_drop`]: all
//! but the `keep` most recent, never the latest nor the rollback target),
//! then per node the generations to remove (`node::gc::plan_generations`:
//! never the committed one, a linked one, one a remaining record names,
//! nor one a kept generation uses) → drop the records → each node removes
//! its generations and every blob and secret no remaining generation
//! names → the deployer's store keeps the blobs some node still uses and
//! the downloads the cluster needs now (`extra_keep`), and loses the rest.
//! Nothing is removed when some node cannot be reached or opened: it
//! runs on the operations' spine (`operation::on_nodes`: every node held,
//! or none touched).

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use futures::future::join_all;
use serde::Serialize;

use super::connect::SshSettings;
use super::error::{Error, RecordWrite, RecordsError};
use super::events::{Collect, Event};
use super::execute::Session;
use super::operation::{on_nodes, Held};
use super::plan_rollback::target;
use super::record::{self, Generation};
use crate::node::gc::{plan_generations, GcReport, Protected};
use crate::store::{Digest, Store};

#[derive(Debug, Clone)]
pub struct GcOptions {
    /// Node generations (and deployer records) kept besides the protected ones.
    pub keep: usize,
    pub dry_run: bool,
    pub parallel: usize,
    pub ssh: SshSettings,
    pub state_dir: PathBuf,
    /// The deployer's store; `None`: leave it alone.
    pub store: Option<Store>,
    /// Blobs the deployer's store keeps whatever the nodes use (the
    /// downloads the cluster needs as it is now).
    pub extra_keep: BTreeSet<Digest>,
}

/// What one node removed, or why it was not collected.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeGc {
    #[serde(flatten)]
    pub report: GcReport,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub unreachable: bool,
}

/// What the deployer's store lost, or why it was left alone.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StoreGc {
    pub blobs: usize,
    pub bytes: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skipped: Option<String>,
}

#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GcResult {
    pub cluster: String,
    pub keep: usize,
    pub dry_run: bool,
    /// Deployer records dropped (numbers).
    pub records: Vec<u64>,
    pub nodes: BTreeMap<String, NodeGc>,
    pub store: StoreGc,
}

impl GcResult {
    /// Bytes freed (or, dry, that would be) on nodes and in the store.
    pub fn bytes(&self) -> u64 {
        self.nodes.values().map(|n| n.report.bytes).sum::<u64>() + self.store.bytes
    }

    pub fn ok(&self) -> bool {
        self.nodes.values().all(|n| n.error.is_none())
    }
}

/// The records of `cluster` to drop: all but the `keep` most recent, never
/// the latest nor the one `rollback` would return to. `gens` oldest first.
pub fn records_to_drop(gens: &[Generation], cluster: &str, keep: usize) -> Vec<u64> {
    let mut kept: BTreeSet<u64> =
        gens.iter().rev().filter(|g| g.cluster == cluster).take(keep).map(|g| g.number).collect();
    kept.extend(gens.last().map(|g| g.number));
    kept.extend(target(gens, None).ok().map(|g| g.number));
    gens.iter().filter(|g| g.cluster == cluster && !kept.contains(&g.number)).map(|g| g.number).collect()
}

/// Collect garbage on every node of the latest record and in the store.
pub async fn gc(opts: &GcOptions) -> Result<GcResult, Error> {
    let records = record::Records::load(&opts.state_dir)?;
    let gens = records.all();
    let latest = gens.last().cloned().ok_or(RecordsError::Empty)?;
    let targets: Vec<_> =
        latest.nodes.iter().map(|(n, r)| opts.ssh.target(n, &r.address, &r.ssh())).collect::<Result<_, _>>()?;
    let mut res = GcResult {
        cluster: latest.cluster.clone(),
        keep: opts.keep,
        dry_run: opts.dry_run,
        records: records_to_drop(gens, &latest.cluster, opts.keep),
        ..Default::default()
    };
    let events = Collect::default();
    // every node reached and held, or none collected
    let work = async |session: &Session<'_>| collect(session, gens, opts, &mut res).await;
    let outcome = match on_nodes("gc", &targets, opts.parallel, &events, work).await {
        Held::Done(r) => r,
        Held::Unreachable | Held::NotOpened => Ok(()),
    };
    for e in events.0.into_inner().unwrap_or_else(|p| p.into_inner()) {
        match e {
            Event::NodeUnreachable { node, reason } => {
                let n = res.nodes.entry(node).or_default();
                n.error = Some(format!("unreachable: {reason}"));
                n.unreachable = true;
            }
            Event::Failed { node, message, .. } => res.nodes.entry(node).or_default().error = Some(message),
            _ => {}
        }
    }
    if !res.ok() {
        res.records.clear();
        res.store.skipped = Some("some node was not collected".into());
    }
    outcome.map(|_| res)
}

/// With every node open and locked: plan, drop records, collect nodes, then
/// the store.
async fn collect(
    session: &Session<'_>,
    gens: &[Generation],
    opts: &GcOptions,
    res: &mut GcResult,
) -> Result<(), Error> {
    let infos = join_all(session.nodes.iter().map(|o| o.node.gc_info())).await;
    let mut plans = Vec::new();
    for (o, info) in session.nodes.iter().zip(infos) {
        let info = info?;
        let protected = Protected {
            current: o.status.current.as_ref().map(|c| c.0),
            linked: o.status.phases.values().copied().collect(),
            recorded: gens
                .iter()
                .filter(|g| !res.records.contains(&g.number))
                .filter_map(|g| g.nodes.get(&o.name).map(|r| r.generation))
                .collect(),
        };
        plans.push(plan_generations(&info, &protected, opts.keep));
    }
    if !opts.dry_run {
        for n in &res.records {
            let f = record::dir(&opts.state_dir).join(format!("{n}.json"));
            std::fs::remove_file(&f)
                .map_err(|e| Error::RecordNotRemoved(RecordWrite { path: f.clone(), reason: e.to_string() }))?;
        }
    }
    let reports = join_all(session.nodes.iter().zip(&plans).map(|(o, p)| o.node.gc(&p.remove, opts.dry_run))).await;
    let mut referenced = opts.extra_keep.clone();
    for (o, r) in session.nodes.iter().zip(reports) {
        let entry = res.nodes.entry(o.name.clone()).or_default();
        match r {
            Ok(report) => {
                referenced.extend(&report.referenced);
                entry.report = report;
            }
            Err(e) => entry.error = Some(e.to_string()),
        }
    }
    res.store = match &opts.store {
        None => StoreGc { skipped: Some("no store given".into()), ..Default::default() },
        Some(_) if !res.ok() => StoreGc { skipped: Some("some node was not collected".into()), ..Default::default() },
        Some(_) if gens.iter().any(|g| g.cluster != res.cluster) => {
            StoreGc { skipped: Some("the store is shared with another cluster's records".into()), ..Default::default() }
        }
        Some(store) => {
            let (blobs, bytes) = store.gc(&referenced, opts.dry_run)?;
            StoreGc { blobs, bytes, skipped: None }
        }
    };
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gen(number: u64, cluster: &str, rollback_of: Option<u64>) -> Generation {
        Generation { number, cluster: cluster.into(), rollback_of, ..Default::default() }
    }

    #[test]
    fn drops_old_records_of_the_cluster_only() {
        let gs: Vec<_> = (1..=6).map(|n| gen(n, "lab", None)).collect();
        assert_eq!(records_to_drop(&gs, "lab", 2), vec![1, 2, 3, 4]);
        // keep 0 still keeps the latest and the rollback target
        assert_eq!(records_to_drop(&gs, "lab", 0), vec![1, 2, 3, 4]);
        assert_eq!(records_to_drop(&gs, "lab", 9), Vec::<u64>::new());
        // after a rollback to 2, the target of the next rollback is 1
        let mut gs: Vec<_> = (1..=4).map(|n| gen(n, "lab", None)).collect();
        gs.push(gen(5, "lab", Some(2)));
        assert_eq!(records_to_drop(&gs, "lab", 1), vec![2, 3, 4]);
        // other clusters' records are never dropped
        let gs = vec![gen(1, "other", None), gen(2, "lab", None), gen(3, "lab", None), gen(4, "lab", None)];
        assert_eq!(records_to_drop(&gs, "lab", 1), vec![2]);
    }
}
