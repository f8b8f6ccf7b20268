//! Nodes leaving the definition: a node the latest deployer record lists
//! but the evaluated cluster no longer names was deployed and is still
//! running what it was given. A plain `switch` names it (an event and a
//! recap line), keeps it in the record and leaves it as it is — its etcd
//! member included: removing a node from a file must not stop its
//! services, nor shrink etcd, by surprise. `switch --prune` reaches it at
//! its recorded address, user, port and key and adds its reset
//! (`plan_reset.rs`) to the switch's plan — its phases are unlinked after
//! every phase of the others switched, as removals always are; its etcd
//! member leaves first, as any member the definition does not want
//! (`membership.rs`: leadership handed off, then `member remove`) — and
//! drops it from the new record.
//!
//! A node to prune that does not answer is removed without being reached
//! (`unreached_gone`): its etcd member leaves through a live member, the
//! cluster's `removeNode` command (the Kubernetes Node deleted through the
//! API) runs on a live control plane, and it moves to the record's `gone`
//! nodes; every later switch tries it, and resets it once it answers.

use std::collections::BTreeSet;

use super::connect::SshSettings;
use super::error::Error;
use super::events::{Event, Sink};
use super::plan_reset;
use super::record::{Generation, Records};
use crate::closure::Closures;
use crate::transport::NodeTarget;

fn defined(closures: &Closures) -> BTreeSet<&str> {
    closures.cluster.nodes.keys().map(String::as_str).collect()
}

/// The nodes of the latest record of this cluster that the definition
/// does not name, with that record.
fn left<'r>(closures: &Closures, records: &'r Records) -> (Vec<String>, Option<&'r Generation>) {
    let latest = records.latest_of(&closures.cluster.name);
    let names =
        plan_reset::left_nodes(latest, &closures.cluster.name, &defined(closures)).into_iter().cloned().collect();
    (names, latest)
}

/// The addresses of the nodes left out of the definition: their etcd
/// members are not the switch's to remove.
pub fn left_addresses(closures: &Closures, records: &Records) -> BTreeSet<String> {
    let (names, latest) = left(closures, records);
    names.iter().filter_map(|n| Some(latest?.nodes.get(n)?.address.clone())).collect()
}

/// How to reach the nodes to prune (none without `prune`) and the nodes
/// removed earlier without being reached (always: one that answers now
/// is reset): from the latest record, as `rollback` reaches nodes.
pub fn targets(
    closures: &Closures,
    records: &Records,
    prune: bool,
    ssh: &SshSettings,
) -> Result<Vec<NodeTarget>, Error> {
    let (names, latest) = left(closures, records);
    let left = names.iter().filter(|_| prune).filter_map(|n| Some((n, latest?.nodes.get(n)?)));
    let gone = latest.into_iter().flat_map(|g| &g.gone).filter(|(n, _)| !closures.cluster.nodes.contains_key(*n));
    left.chain(gone).map(|(n, r)| ssh.target(n, &r.address, &r.ssh())).collect()
}

/// Of the targets that did not answer, those the run removes without
/// reaching them: nodes to prune (with `prune`) and nodes removed so
/// before. The others are the run's to skip or stop for.
pub fn unreached_gone(closures: &Closures, records: &Records, prune: bool, unreachable: &[String]) -> Vec<String> {
    let latest = records.latest_of(&closures.cluster.name);
    let (left, _) = left(closures, records);
    let was_gone = |n: &String| latest.is_some_and(|g| g.gone.contains_key(n));
    unreachable.iter().filter(|n| (prune && left.contains(n)) || was_gone(n)).cloned().collect()
}

/// Whether `node`, not in the definition, is one removed before without
/// being reached (a switch that reaches it resets it, `--prune` or not).
pub fn was_gone(closures: &Closures, records: &Records, node: &str) -> bool {
    records.latest_of(&closures.cluster.name).is_some_and(|g| g.gone.contains_key(node))
}

/// Name each node left out of the definition (a switch without `--prune`).
pub fn name_left(closures: &Closures, records: &Records, sink: &dyn Sink) {
    let (names, latest) = left(closures, records);
    for n in names {
        let address = latest.and_then(|g| g.nodes.get(&n)).map_or(String::new(), |r| r.address.clone());
        sink.emit(Event::NodeLeft { node: n, address });
    }
}
