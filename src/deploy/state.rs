//! Reading a node's deployed state beyond `status`, and recording it at
//! commit. The node program keeps manifests and links but not phase
//! hashes — and a phase hash also covers hooks, checks and activation,
//! which no manifest shows. So each commit also hands the node program the
//! phase record (`generations/<N>/kdeploy-phases`, one
//! `name TAB hash TAB generation TAB active` line per phase), and a
//! changed node is read back with the node program's `state`: that record
//! and the manifest of every linked phase, in one round trip (decoded by
//! `node/protocol/reply.rs`; here they become the plan's types).

use std::collections::BTreeMap;

use super::plan::RecordedPhase;
use super::plan_switch::Deployed;
use crate::node::{Node, NodeError, NodeStatus, PhaseEntry, PhaseRecord};
use crate::store::Digest;

/// The node's phase record as the plan reads it (the protocol's
/// [`PhaseEntry`] per phase).
fn recorded(record: PhaseRecord) -> BTreeMap<String, RecordedPhase> {
    record
        .into_iter()
        .map(|(n, e)| (n, RecordedPhase { hash: e.hash, generation: e.generation, active: e.active }))
        .collect()
}

/// Everything the plan needs from a node whose committed hash differs
/// (one round trip). A manifest that cannot be read or parsed is left
/// out: the phase is then planned as if new (all its units started).
pub async fn read_deployed(node: &Node<'_>, status: &NodeStatus) -> Result<Deployed, NodeError> {
    let mut dep = Deployed {
        committed: status.current,
        next: status.next,
        links: status.phases.clone(),
        drift: status.drift.clone(),
        ..Default::default()
    };
    if status.current.is_none() && status.phases.is_empty() {
        return Ok(dep);
    }
    let state = node.state().await?;
    dep.recorded = recorded(state.record);
    for (p, m) in state.manifests {
        if let Ok(m) = m {
            dep.manifests.insert(p, m);
        }
    }
    Ok(dep)
}

/// Commit generation `gen` with its phase record (`None`: the generation
/// keeps the record it was committed with before).
pub async fn commit(
    node: &Node<'_>,
    gen: u64,
    node_hash: &Digest,
    phases: Option<&BTreeMap<String, RecordedPhase>>,
) -> Result<(), NodeError> {
    let record: Option<PhaseRecord> = phases.map(|p| {
        p.iter()
            .map(|(n, r)| (n.clone(), PhaseEntry { hash: r.hash, generation: r.generation, active: r.active }))
            .collect()
    });
    node.commit(gen, node_hash, record.as_ref()).await
}

/// The phase record of any generation (for `rollback`).
pub async fn read_record(node: &Node<'_>, gen: u64) -> Result<BTreeMap<String, RecordedPhase>, NodeError> {
    Ok(recorded(node.phase_record(gen).await?))
}
