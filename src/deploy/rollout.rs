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

/// One wave's entries in batches. Each entry is (node index, step index,
/// whether the step disrupts the node, the node's rollout); the order of
/// entries is kept inside a batch. A disrupting step of node `lead` goes
/// first, alone.
pub fn batches(entries: &[(usize, usize, bool, Rollout)], lead: Option<usize>) -> Vec<Vec<(usize, usize)>> {
    let leads = |e: &(usize, usize, bool, Rollout)| e.2 && Some(e.0) == lead;
    let mut out: Vec<Vec<(usize, usize)>> = entries.iter().filter(|e| leads(e)).map(|e| vec![(e.0, e.1)]).collect();
    let rest: Vec<&(usize, usize, bool, Rollout)> = entries.iter().filter(|e| e.2 && !leads(e)).collect();
    let mut groups: Vec<Group> = rest.iter().map(|e| e.3.group).collect();
    groups.sort();
    groups.dedup();
    for g in groups {
        let members: Vec<&&(usize, usize, bool, Rollout)> = rest.iter().filter(|e| e.3.group == g).collect();
        // One group, one size: the smallest any member asks for.
        let size = members.iter().map(|e| e.3.serial.size(members.len())).min().unwrap_or(1);
        out.extend(members.chunks(size).map(|c| c.iter().map(|e| (e.0, e.1)).collect()));
    }
    // Calm steps go with the first batch, or the one after the lead's: the
    // lead's runs alone.
    let calm: Vec<(usize, usize)> = entries.iter().filter(|e| !e.2).map(|e| (e.0, e.1)).collect();
    if calm.is_empty() {
        return out;
    }
    let at = usize::from(entries.iter().any(leads));
    match out.get_mut(at) {
        Some(batch) => {
            batch.extend(calm);
            batch.sort();
        }
        None => out.push(calm),
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn disrupting_steps_go_group_by_group_in_batches_and_calm_ones_first() {
        let etcd = Rollout { group: Group::Etcd, serial: Serial::Count(1) };
        let cp = Rollout { group: Group::ControlPlane, serial: Serial::Count(1) };
        let w = Rollout { group: Group::Workers, serial: Serial::Percent(50) };
        let entries = [
            (0, 0, true, w),
            (1, 0, true, etcd),
            (2, 3, false, etcd),
            (3, 1, true, etcd),
            (4, 0, true, cp),
            (5, 0, true, w),
            (6, 0, true, w),
            (7, 2, false, w),
        ];
        assert_eq!(
            batches(&entries, None),
            vec![vec![(1, 0), (2, 3), (7, 2)], vec![(3, 1)], vec![(4, 0)], vec![(0, 0), (5, 0)], vec![(6, 0)]]
        );
        // Nothing disrupts: one batch, as before rollouts.
        assert_eq!(batches(&[(0, 0, false, etcd), (1, 0, false, w)], None), vec![vec![(0, 0), (1, 0)]]);
        assert!(batches(&[], None).is_empty());
        // All at once is one batch.
        let all = Rollout::ALL_AT_ONCE;
        assert_eq!(batches(&[(0, 0, true, all), (1, 0, true, all)], None), vec![vec![(0, 0), (1, 0)]]);
    }

    #[test]
    fn the_lead_goes_first_alone_whatever_its_group() {
        let etcd = Rollout { group: Group::Etcd, serial: Serial::Count(1) };
        let cp = Rollout { group: Group::ControlPlane, serial: Serial::Count(2) };
        let entries = [(0, 0, true, etcd), (1, 0, true, cp), (2, 0, true, cp), (3, 0, false, cp)];
        assert_eq!(batches(&entries, Some(2)), vec![vec![(2, 0)], vec![(0, 0), (3, 0)], vec![(1, 0)]]);
        // alone even when nothing else disrupts
        assert_eq!(batches(&[(0, 0, false, cp), (1, 0, true, cp)], Some(1)), vec![vec![(1, 0)], vec![(0, 0)]]);
        // a lead with nothing disrupting leads nothing
        assert_eq!(batches(&entries, Some(3)), vec![vec![(0, 0), (3, 0)], vec![(1, 0), (2, 0)]]);
    }
}
