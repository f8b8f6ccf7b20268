//! Garbage collection on a node, decided as a pure function: which
//! generation directories go ([`plan_generations`]) given what the node
//! holds (`gc-info`), its committed generation, its phase links and the
//! generations the deployer still records; and what the node program's
//! `gc` reports it removed ([`GcReport`], decoded with every other reply in
//! `protocol/reply.rs`). Blobs and secrets are swept by the node program
//! itself: whatever no remaining generation's manifest names.

use std::collections::BTreeSet;

use crate::store::Digest;

/// One generation directory on a node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeGeneration {
    pub number: u64,
    /// Committed at least once (it has a phase record).
    pub committed: bool,
    /// The generations its phase record links into (a generation holds
    /// only the phases that changed in its run; the others live on in
    /// older generations).
    pub uses: BTreeSet<u64>,
}

/// What must stay on a node whatever `keep` says.
#[derive(Debug, Clone, Default)]
pub struct Protected {
    /// The committed generation.
    pub current: Option<u64>,
    /// Generations the phase links point into (after a cut-off run they
    /// may be uncommitted).
    pub linked: BTreeSet<u64>,
    /// Generations the deployer's records name for this node (the
    /// rollback target among them).
    pub recorded: BTreeSet<u64>,
}

/// The generations to keep and to remove, both ascending.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GenerationPlan {
    pub keep: Vec<u64>,
    pub remove: Vec<u64>,
}

/// Keep the `keep` most recent committed generations, the current one,
/// the linked ones, the recorded ones and the newest directory (so
/// generation numbers are never reused); then every generation a kept one
/// uses. Remove the rest — old generations and the leftovers of runs that
/// never committed.
pub fn plan_generations(gens: &[NodeGeneration], protected: &Protected, keep: usize) -> GenerationPlan {
    let mut roots: BTreeSet<u64> = gens.iter().filter(|g| g.committed).map(|g| g.number).rev().take(keep).collect();
    roots.extend(protected.current);
    roots.extend(&protected.linked);
    roots.extend(&protected.recorded);
    roots.extend(gens.iter().map(|g| g.number).max());
    let mut kept = roots.clone();
    for g in gens.iter().filter(|g| roots.contains(&g.number)) {
        kept.extend(&g.uses);
    }
    let mut plan = GenerationPlan::default();
    for g in gens {
        if kept.contains(&g.number) {
            plan.keep.push(g.number);
        } else {
            plan.remove.push(g.number);
        }
    }
    plan.keep.sort_unstable();
    plan.remove.sort_unstable();
    plan
}

/// What the node program's `gc` removed (or, dry, would remove).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GcReport {
    pub generations: Vec<u64>,
    pub blobs: usize,
    pub secrets: usize,
    /// Uploads left half-done by a killed run.
    pub partial: usize,
    pub bytes: u64,
    /// Blobs the remaining generations name.
    #[serde(skip)]
    pub referenced: BTreeSet<Digest>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn g(number: u64, uses: &[u64]) -> NodeGeneration {
        NodeGeneration { number, committed: !uses.is_empty(), uses: uses.iter().copied().collect() }
    }

    fn set(v: &[u64]) -> BTreeSet<u64> {
        v.iter().copied().collect()
    }

    #[test]
    fn keeps_the_most_recent_committed_and_what_they_use() {
        // 1..6 committed; 6 links its unchanged phases into 2 and 4
        let gens = vec![g(1, &[1]), g(2, &[2]), g(3, &[2, 3]), g(4, &[4]), g(5, &[4, 5]), g(6, &[2, 4, 6])];
        let p = Protected { current: Some(6), linked: set(&[2, 4, 6]), recorded: BTreeSet::new() };
        let plan = plan_generations(&gens, &p, 2);
        assert_eq!(plan.keep, vec![2, 4, 5, 6]);
        assert_eq!(plan.remove, vec![1, 3]);
    }

    #[test]
    fn never_the_current_linked_recorded_or_newest() {
        // rolled back to 2: current and links are old, 7 is an uncommitted
        // leftover, 3 is the deployer's rollback target
        let gens = vec![g(1, &[1]), g(2, &[2]), g(3, &[3]), g(4, &[4]), g(5, &[5]), g(6, &[]), g(7, &[])];
        let p = Protected { current: Some(2), linked: set(&[2]), recorded: set(&[3]) };
        let plan = plan_generations(&gens, &p, 0);
        assert_eq!(plan.keep, vec![2, 3, 7]);
        assert_eq!(plan.remove, vec![1, 4, 5, 6]);
        // keep more than there are: nothing goes but the uncommitted leftover
        let plan = plan_generations(&gens, &p, 10);
        assert_eq!(plan.remove, vec![6]);
    }

    #[test]
    fn a_linked_uncommitted_generation_stays() {
        let gens = vec![g(1, &[1]), g(2, &[2]), g(3, &[])];
        let p = Protected { current: Some(2), linked: set(&[3]), recorded: BTreeSet::new() };
        assert_eq!(plan_generations(&gens, &p, 1).remove, vec![1]);
        assert_eq!(plan_generations(&[], &p, 5), GenerationPlan::default());
    }
}
