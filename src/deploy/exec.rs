//! `exec`: one shell command on the selected nodes, all at once (at most
//! `parallel` connecting together), as root (the login's escalation, as
//! for every command kdeploy runs). Each node's exit status and output
//! come back, each stream kept to [`OUTPUT_LIMIT`] bytes (a node's answer
//! is untrusted: a runaway command must not fill the deployer's memory).
//! No lock is taken and nothing is recorded: the command changes what it
//! changes, as `ssh node CMD` would.

use std::collections::BTreeMap;

use futures::future::join_all;
use serde::Serialize;

use super::connect::connect_reporting;
use super::events::{Collect, Event, Sink, Tee};
use crate::transport::{Host, NodeTarget};

/// Bytes of stdout, and of stderr, kept per node.
pub const OUTPUT_LIMIT: usize = 1 << 20;

/// What one node answered.
#[derive(Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeRun {
    /// The command's exit status (`None`: it did not run).
    pub status: Option<u32>,
    pub stdout: String,
    pub stderr: String,
    /// Output beyond [`OUTPUT_LIMIT`] was dropped.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub truncated: bool,
    /// Why the command did not run (the node unreachable, the channel refused).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// Run `command` on every target; one answer per target, by node name.
pub async fn exec(
    targets: &[NodeTarget],
    command: &str,
    parallel: usize,
    sink: &dyn Sink,
) -> BTreeMap<String, NodeRun> {
    let mut runs: BTreeMap<String, NodeRun> = targets
        .iter()
        .map(|t| (t.name.clone(), NodeRun { error: Some("unreachable".into()), ..Default::default() }))
        .collect();
    let seen = Collect::default();
    let (hosts, _) = connect_reporting(targets, parallel, &Tee(vec![sink, &seen])).await;
    for e in seen.0.into_inner().unwrap_or_default() {
        if let Event::NodeUnreachable { node, reason } = e {
            if let Some(r) = runs.get_mut(&node) {
                r.error = Some(reason);
            }
        }
    }
    let answers =
        join_all(hosts.iter().map(|h| async move { (h.name().to_string(), run_one(h.as_ref(), command).await) })).await;
    for (name, run) in answers {
        runs.insert(name, run);
    }
    join_all(hosts.iter().map(|h| h.close())).await;
    runs
}

async fn run_one(host: &dyn Host, command: &str) -> NodeRun {
    let process = match host.spawn(command).await {
        Ok(p) => p,
        Err(e) => return NodeRun { error: Some(e.to_string()), ..Default::default() },
    };
    let (out, truncated) = process.wait_bounded(OUTPUT_LIMIT).await;
    NodeRun {
        status: Some(out.status),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        truncated,
        error: None,
    }
}
