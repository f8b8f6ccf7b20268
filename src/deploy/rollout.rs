//! Rolling changes: how many nodes of a kind may be disrupted at once.
//! A step disrupts a node when it restarts or stops a unit. Inside one
//! phase's wave, disrupting steps are rationed per [`Group`] (etcd members
//! first, then control planes, then workers), each group in batches of its
//! [`Serial`] (each node's `rollout`, which the stdlib derives from its
//! roles and `settings.rollout`, defaults like Kubespray's: one etcd
//! member and one control plane at a time, workers 20% at a time); the
//! steps that disrupt nothing go with the first batch. The executor runs a
//! batch's steps, their checks included, before the next batch starts, so
//! a phase's checks are the health gate between batches.

pub use crate::schema::rollout::{Group, Rollout, Serial};

/// One step of a wave as the rollout sees it: the step (whatever names
/// it), whether its node leads (`kubeadm init` ran there), whether it
/// disrupts its node, and the node's rollout.
#[derive(Debug, Clone)]
pub struct Entry<K> {
    pub step: K,
    pub lead: bool,
    pub disrupts: bool,
    pub rollout: Rollout,
}

/// One wave's entries in batches, each batch in the order of `entries`.
/// A disrupting step of the lead goes first, alone.
pub fn batches<K: Clone>(entries: &[Entry<K>]) -> Vec<Vec<K>> {
    let leads = |e: &Entry<K>| e.disrupts && e.lead;
    let mut slot = vec![0; entries.len()];
    let mut next = 0;
    for (i, _) in entries.iter().enumerate().filter(|(_, e)| leads(e)) {
        slot[i] = next;
        next += 1;
    }
    let rationed = |e: &Entry<K>| e.disrupts && !leads(e);
    let mut groups: Vec<Group> = entries.iter().filter(|e| rationed(e)).map(|e| e.rollout.group).collect();
    groups.sort();
    groups.dedup();
    for g in groups {
        let members: Vec<usize> =
            (0..entries.len()).filter(|&i| rationed(&entries[i]) && entries[i].rollout.group == g).collect();
        // One group, one size: the smallest any member asks for.
        let size = members.iter().map(|&i| entries[i].rollout.serial.size(members.len())).min().unwrap_or(1);
        for chunk in members.chunks(size) {
            chunk.iter().for_each(|&i| slot[i] = next);
            next += 1;
        }
    }
    // Calm steps go with the first batch, or the one after the lead's: the
    // lead's runs alone.
    let calm_at = usize::from(entries.iter().any(leads));
    let calm = entries.iter().any(|e| !e.disrupts);
    let mut out = vec![Vec::new(); if calm { next.max(calm_at + 1) } else { next }];
    for (i, e) in entries.iter().enumerate() {
        out[if e.disrupts { slot[i] } else { calm_at }].push(e.step.clone());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(step: &'static str, disrupts: bool, rollout: Rollout) -> Entry<&'static str> {
        Entry { step, lead: false, disrupts, rollout }
    }

    /// `entries` with the node `lead` leading.
    fn led(mut entries: Vec<Entry<&'static str>>, lead: &str) -> Vec<Entry<&'static str>> {
        entries.iter_mut().for_each(|e| e.lead = e.step == lead);
        entries
    }

    #[test]
    fn disrupting_steps_go_group_by_group_in_batches_and_calm_ones_first() {
        let etcd = Rollout { group: Group::Etcd, serial: Serial::Count(1) };
        let cp = Rollout { group: Group::ControlPlane, serial: Serial::Count(1) };
        let w = Rollout { group: Group::Workers, serial: Serial::Percent(50) };
        let entries = [
            entry("w0", true, w),
            entry("e1", true, etcd),
            entry("e2", false, etcd),
            entry("e3", true, etcd),
            entry("c4", true, cp),
            entry("w5", true, w),
            entry("w6", true, w),
            entry("w7", false, w),
        ];
        assert_eq!(
            batches(&entries),
            vec![vec!["e1", "e2", "w7"], vec!["e3"], vec!["c4"], vec!["w0", "w5"], vec!["w6"]]
        );
        // Nothing disrupts: one batch, as before rollouts.
        assert_eq!(batches(&[entry("e0", false, etcd), entry("w1", false, w)]), vec![vec!["e0", "w1"]]);
        assert!(batches::<&str>(&[]).is_empty());
        // All at once is one batch.
        let all = Rollout::ALL_AT_ONCE;
        assert_eq!(batches(&[entry("a", true, all), entry("b", true, all)]), vec![vec!["a", "b"]]);
    }

    #[test]
    fn the_lead_goes_first_alone_whatever_its_group() {
        let etcd = Rollout { group: Group::Etcd, serial: Serial::Count(1) };
        let cp = Rollout { group: Group::ControlPlane, serial: Serial::Count(2) };
        let entries =
            vec![entry("e0", true, etcd), entry("c1", true, cp), entry("c2", true, cp), entry("c3", false, cp)];
        assert_eq!(batches(&led(entries.clone(), "c2")), vec![vec!["c2"], vec!["e0", "c3"], vec!["c1"]]);
        // alone even when nothing else disrupts
        let calm_and_lead = vec![entry("c0", false, cp), entry("c1", true, cp)];
        assert_eq!(batches(&led(calm_and_lead, "c1")), vec![vec!["c1"], vec!["c0"]]);
        // a lead with nothing disrupting leads nothing
        assert_eq!(batches(&led(entries, "c3")), vec![vec!["e0", "c3"], vec!["c1", "c2"]]);
    }
}
