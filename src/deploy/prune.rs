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

use std::collections::BTreeSet;

use super::events::{Event, Sink};
use super::execute::Reached;
use super::plan_reset;
use super::record::{self, Generation};
use super::switch::SwitchOptions;
use crate::closure::Closures;
use crate::transport::NodeTarget;

fn defined(closures: &Closures) -> BTreeSet<&str> {
    closures.cluster.nodes.keys().map(String::as_str).collect()
}

/// The nodes of the latest record of this cluster that the definition
/// does not name, with that record.
pub fn left(closures: &Closures, opts: &SwitchOptions) -> (Vec<String>, Option<Generation>) {
    let latest = record::latest_of(&opts.state_dir, &closures.cluster.name);
    let names = plan_reset::left_nodes(latest.as_ref(), &closures.cluster.name, &defined(closures))
        .into_iter()
        .cloned()
        .collect();
    (names, latest)
}

/// The addresses of the nodes left out of the definition: their etcd
/// members are not the switch's to remove.
pub fn left_addresses(closures: &Closures, opts: &SwitchOptions) -> BTreeSet<String> {
    let (names, latest) = left(closures, opts);
    names.iter().filter_map(|n| Some(latest.as_ref()?.nodes.get(n)?.address.clone())).collect()
}

/// How to reach the nodes to prune (none without `--prune`): from the
/// latest record, as `rollback` reaches nodes.
pub fn targets(closures: &Closures, opts: &SwitchOptions) -> Result<Vec<NodeTarget>, String> {
    if !opts.prune {
        return Ok(Vec::new());
    }
    let (names, latest) = left(closures, opts);
    let g = latest.as_ref();
    names
        .iter()
        .filter_map(|n| Some((n, g?.nodes.get(n)?)))
        .map(|(n, r)| opts.ssh.target(n, &r.address, &r.ssh()))
        .collect()
}

/// Name each node left out of the definition (without `--prune`).
pub fn name_left(closures: &Closures, opts: &SwitchOptions, sink: &dyn Sink) {
    if opts.prune {
        return;
    }
    let (names, latest) = left(closures, opts);
    for n in names {
        let address = latest.as_ref().and_then(|g| g.nodes.get(&n)).map_or(String::new(), |r| r.address.clone());
        sink.emit(Event::NodeLeft { node: n, address });
    }
}

/// The reached nodes, those of the definition first (in their order),
/// then the others (nodes to prune).
pub fn defined_first<'h>(closures: &Closures, nodes: &[Reached<'h>]) -> Vec<Reached<'h>> {
    let (mut a, b): (Vec<Reached<'h>>, Vec<Reached<'h>>) =
        nodes.iter().partition(|r| closures.cluster.nodes.contains_key(r.host.name()));
    a.extend(b);
    a
}
