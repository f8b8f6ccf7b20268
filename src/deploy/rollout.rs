//! Rolling changes: how many nodes of a kind may be disrupted at once.
//! A step disrupts a node when it restarts or stops a unit. Inside one
//! phase's wave, disrupting steps are rationed per [`Group`] (etcd members
//! first, then control planes, then workers), each group in batches of its
//! [`Serial`] (`settings.rollout`, defaults like Kubespray's: one etcd
//! member and one control plane at a time, workers 20% at a time); the
//! steps that disrupt nothing go with the first batch. The executor runs a
//! batch's steps, their checks included, before the next batch starts, so
//! a phase's checks are the health gate between batches.

use serde::{Deserialize, Serialize};

/// The kinds of node a rollout rations, in the order their batches run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Group {
    Etcd,
    ControlPlane,
    Workers,
}

/// A batch size: a number of nodes, or a percentage of the group (rounded
/// up, at least one node).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Serial {
    Count(usize),
    Percent(u8),
}

impl Serial {
    /// From the stdlib's value: a positive integer or "N%" (1..100).
    pub fn parse(v: &serde_json::Value) -> Option<Serial> {
        if let Some(n) = v.as_u64() {
            return (n >= 1).then_some(Serial::Count(n as usize));
        }
        let p: u8 = v.as_str()?.strip_suffix('%')?.parse().ok()?;
        (1..=100).contains(&p).then_some(Serial::Percent(p))
    }

    /// How many of `group` nodes go at once.
    pub fn size(self, group: usize) -> usize {
        match self {
            Serial::Count(n) => n,
            Serial::Percent(p) => (group * p as usize).div_ceil(100),
        }
        .max(1)
    }
}

/// One node's rollout: its group and that group's batch size.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rollout {
    pub group: Group,
    pub serial: Serial,
}

impl Rollout {
    /// Everything at once: what a node without a rollout gets.
    pub const ALL_AT_ONCE: Rollout = Rollout { group: Group::Workers, serial: Serial::Percent(100) };
}

/// A node's rollout from its roles (its most stateful one decides) and the
/// cluster's `settings.rollout`; a missing or malformed value (which the
/// stdlib's option types refuse) means one node at a time.
pub fn for_node(settings: &serde_json::Value, roles: &[String]) -> Rollout {
    let has = |r: &str| roles.iter().any(|x| x == r);
    let (group, key) = if has("etcd") {
        (Group::Etcd, "etcd")
    } else if has("control-plane") {
        (Group::ControlPlane, "controlPlane")
    } else {
        (Group::Workers, "workers")
    };
    let serial = Serial::parse(&settings["rollout"][key]).unwrap_or(Serial::Count(1));
    Rollout { group, serial }
}

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
    use serde_json::json;

    fn roles(r: &[&str]) -> Vec<String> {
        r.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn the_most_stateful_role_decides_and_settings_size_the_batches() {
        let s = json!({ "rollout": { "etcd": 1, "controlPlane": 2, "workers": "20%" } });
        assert_eq!(for_node(&s, &roles(&["worker", "etcd"])), Rollout { group: Group::Etcd, serial: Serial::Count(1) });
        assert_eq!(for_node(&s, &roles(&["control-plane"])).serial, Serial::Count(2));
        assert_eq!(for_node(&s, &roles(&["worker"])).serial, Serial::Percent(20));
        // Absent settings: one at a time, never all at once by accident.
        assert_eq!(for_node(&json!({}), &roles(&["worker"])).serial, Serial::Count(1));
    }

    #[test]
    fn serial_values() {
        assert_eq!(Serial::parse(&json!(3)), Some(Serial::Count(3)));
        assert_eq!(Serial::parse(&json!("25%")), Some(Serial::Percent(25)));
        for bad in [json!(0), json!("0%"), json!("101%"), json!("x%"), json!(-1), json!(null)] {
            assert_eq!(Serial::parse(&bad), None, "{bad}");
        }
        assert_eq!(Serial::Percent(20).size(2), 1);
        assert_eq!(Serial::Percent(20).size(11), 3);
        assert_eq!(Serial::Percent(100).size(7), 7);
        assert_eq!(Serial::Count(5).size(2), 5);
    }

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
