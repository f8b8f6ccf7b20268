//! The plan of a rollback, pure: which recorded deployer generation to
//! return to ([`target`]), and per node which phase links move
//! ([`steps`]) and what systemd does on the way ([`node_work`]): units
//! stopped/started/restarted as `node::plan_units` decides from the two
//! manifests and every file the rollback changes on the node; no hooks, no
//! checks (they live in the closure, which a rollback does not evaluate).
//! Phases that get (another) generation switch in phase order, phases that
//! go away are unlinked after them, last phase first (`plan::waves`).

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use super::error::{Error, RecordsError, RollbackRefused};
use super::plan::{Commit, Ending, FileDiff, NodeWork, RecordedPhase, Step};
use super::record::Generation;
use crate::node::{changed_files, plan_units, Manifest};
use crate::store::Digest;

/// The recorded generation to return to: `to`, or the last one before the
/// generation in effect now.
pub fn target(gens: &[Generation], to: Option<u64>) -> Result<&Generation, Error> {
    let latest = gens.last().ok_or(RecordsError::Empty)?;
    if let Some(n) = to {
        let have = || gens.iter().map(|g| g.number).collect();
        let found = gens.iter().find(|g| g.number == n);
        return Ok(found.ok_or_else(|| RollbackRefused::NoSuchGeneration { to: n, have: have() })?);
    }
    let in_effect = latest.rollback_of.unwrap_or(latest.number);
    Ok(gens.iter().rev().find(|g| g.number < in_effect).ok_or(RollbackRefused::Oldest { in_effect })?)
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

/// What one node needs to return to a generation: where its links are, the
/// target's phase record, and the manifests of both sides.
#[derive(Debug, Clone, Default)]
pub struct NodeState {
    pub links: BTreeMap<String, u64>,
    /// Phase → generation, the active phases of the target's record.
    pub want: BTreeMap<String, u64>,
    /// The live manifest of each linked phase.
    pub live: BTreeMap<String, Manifest>,
    /// The manifest of each phase at its target generation.
    pub target: BTreeMap<String, Manifest>,
}

/// The active phases of a phase record, by the generation they link into.
pub fn wanted(record: &BTreeMap<String, RecordedPhase>) -> BTreeMap<String, u64> {
    record.iter().filter(|(_, r)| r.active).map(|(p, r)| (p.clone(), r.generation)).collect()
}

/// The work for one node: one step per moving link, and the commit of the
/// target generation (`pending`: a run moved links since the node's last
/// commit, so even a node whose links are right commits again).
pub fn node_work(name: &str, st: &NodeState, generation: u64, hash: Digest, already: bool) -> NodeWork {
    let moves = steps(&st.links, &st.want);
    let mut w = NodeWork { name: name.to_string(), ..Default::default() };
    let mut pairs = Vec::new();
    for (phase, from, to) in moves {
        let from_manifest = from.and_then(|_| st.live.get(&phase).cloned());
        let to_manifest = to.and_then(|_| st.target.get(&phase).cloned());
        pairs.push((phase, from, to, from_manifest, to_manifest));
    }
    let changed: BTreeSet<PathBuf> =
        pairs.iter().flat_map(|(_, _, _, a, b)| changed_files(a.as_ref(), b.as_ref())).collect();
    for (phase, from, to, from_manifest, to_manifest) in pairs {
        let units = |m: &Option<Manifest>| m.as_ref().map_or(Vec::new(), |m| m.units.clone());
        let unit_plan = plan_units(&units(&from_manifest), &units(&to_manifest), &changed);
        w.steps.push(Step {
            files: FileDiff::between(from_manifest.as_ref(), to_manifest.as_ref()),
            phase,
            from,
            to,
            from_manifest,
            to_manifest,
            units: unit_plan,
            hooks: Vec::new(),
            checks: Vec::new(),
            guard: None,
        });
    }
    if !(already && w.steps.is_empty()) {
        w.ending = Ending::Commit(Commit { generation, hash, record: None });
    }
    w
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gen(number: u64, rollback_of: Option<u64>) -> Generation {
        Generation { number, cluster: "c".into(), rollback_of, ..Default::default() }
    }

    #[test]
    fn target_is_previous_of_generation_in_effect() {
        let gs = vec![gen(1, None), gen(2, None), gen(3, None)];
        assert_eq!(target(&gs, None).unwrap().number, 2);
        assert_eq!(target(&gs, Some(1)).unwrap().number, 1);
        assert!(matches!(target(&gs, Some(9)), Err(Error::Rollback(RollbackRefused::NoSuchGeneration { to: 9, .. }))));
        let gs = vec![gen(1, None), gen(2, None), gen(3, None), gen(4, Some(2))];
        assert_eq!(target(&gs, None).unwrap().number, 1);
        let one = [gen(1, None)];
        let oldest = target(&one, None);
        assert!(matches!(oldest, Err(Error::Rollback(RollbackRefused::Oldest { in_effect: 1 }))), "{oldest:?}");
        assert!(matches!(target(&[], None), Err(Error::Records(RecordsError::Empty))));
    }

    #[test]
    fn steps_and_order() {
        let links: BTreeMap<String, u64> = [("a", 3), ("b", 3), ("c", 3)].map(|(k, v)| (k.to_string(), v)).into();
        let want: BTreeMap<String, u64> = [("a", 3), ("b", 2), ("d", 1)].map(|(k, v)| (k.to_string(), v)).into();
        let s = steps(&links, &want);
        assert_eq!(s, vec![("b".into(), Some(3), Some(2)), ("c".into(), Some(3), None), ("d".into(), None, Some(1))]);
    }
}
