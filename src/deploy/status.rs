//! `status`: what each node of the latest deployer record runs, read
//! without changing anything — no lock, no evaluation, nothing written:
//! the record says how to reach each node and what it should run; the
//! node program's `status --verify` says what it does run (committed
//! generation, a run that moved links without committing, every drift).

use std::collections::BTreeMap;

use futures::future::join_all;
use serde::Serialize;

use super::connect::{connect_reporting, SshSettings};
use super::error::Error;
use super::events::Collect;
use super::record::Generation;
use crate::node::{Drift, Node};

/// One node as `status` found it.
#[derive(Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeReport {
    pub reachable: bool,
    /// The generation the deployer's latest record names for the node.
    pub recorded_generation: u64,
    pub committed_generation: Option<u64>,
    /// The node is on the recorded generation and hash.
    pub as_recorded: bool,
    pub pending: bool,
    pub drift: Vec<Drift>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl NodeReport {
    /// Reached, as recorded, nothing pending, no drift.
    pub fn clean(&self) -> bool {
        self.reachable && self.as_recorded && !self.pending && self.drift.is_empty() && self.error.is_none()
    }
}

/// Every node of `latest`, as it answers.
pub async fn status(
    latest: &Generation,
    ssh: &SshSettings,
    parallel: usize,
) -> Result<BTreeMap<String, NodeReport>, Error> {
    let targets: Vec<_> =
        latest.nodes.iter().map(|(n, r)| ssh.target(n, &r.address, &r.ssh())).collect::<Result<_, _>>()?;
    let mut reports: BTreeMap<String, NodeReport> = latest
        .nodes
        .iter()
        .map(|(n, r)| (n.clone(), NodeReport { recorded_generation: r.generation, ..Default::default() }))
        .collect();
    let (hosts, _) = connect_reporting(&targets, parallel, &Collect::default()).await;
    let read = join_all(hosts.iter().map(|h| Node::status_read_only(h.as_ref(), ""))).await;
    for (h, st) in hosts.iter().zip(read) {
        let Some(rep) = reports.get_mut(h.name()) else { continue };
        rep.reachable = true;
        let rec = &latest.nodes[h.name()];
        match st {
            Ok(st) => {
                rep.committed_generation = st.current.as_ref().map(|c| c.0);
                rep.as_recorded =
                    st.current.as_ref().is_some_and(|(g, hash)| *g == rec.generation && hash.hex() == rec.hash);
                rep.pending = st.pending;
                rep.drift = st.drift;
            }
            Err(e) => rep.error = Some(e.to_string()),
        }
    }
    join_all(hosts.iter().map(|h| h.close())).await;
    Ok(reports)
}
