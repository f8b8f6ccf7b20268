//! Membership changes as plan steps, decided by a pure function: given a
//! membership the stdlib describes (`schema::Membership`: etcd's), the
//! members a live member lists, and the nodes the definition wants,
//! [`plan`] returns the joins and leaves, one member at a time, in an
//! order that keeps quorum: stale unstarted members removed first, then
//! each new member joins (added as a learner, which never counts towards
//! quorum, started, promoted once in sync), then members no longer wanted
//! leave (`member remove`, then their node's step stops them). Nothing
//! here is set by hand: whether a node joins a running cluster is what
//! the list says. The executor runs the changes (`member_step.rs`).
//!
//! One list is one member's answer, and it may be wrong (a member cut off
//! from the others, one that lost its data and started a cluster alone).
//! Wiping a node's member data is the one decision that cannot be taken
//! back, so it also asks the node's own member ([`answers_as_member`]).

use std::collections::BTreeMap;

use super::error::MembershipError;
use crate::schema::Membership;

/// A member as the membership's `list` command reports it (etcdctl's
/// simple format: `ID, STATUS, NAME, PEER ADDRS, CLIENT ADDRS, IS LEARNER`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Listed {
    pub id: String,
    pub started: bool,
    /// Empty until the member has started once.
    pub name: String,
    pub peer: String,
    /// Client URLs (empty until started).
    pub client: String,
    pub learner: bool,
}

/// Read a `list` output; lines that are not members are an error naming
/// the line (a changed etcdctl output must not be taken for "no members").
pub fn parse_list(text: &str) -> Result<Vec<Listed>, MembershipError> {
    let mut out = Vec::new();
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        // columns are separated by ", ", several URLs of one member by ","
        let f: Vec<&str> = line.split(", ").map(str::trim).collect();
        let bad = || MembershipError::ListLine { line: line.to_string() };
        if f.len() != 6 {
            return Err(bad());
        }
        let started = match f[1] {
            "started" => true,
            "unstarted" => false,
            _ => return Err(bad()),
        };
        let learner = match f[f.len() - 1] {
            "true" => true,
            "false" => false,
            _ => return Err(bad()),
        };
        if f[0].is_empty() || !f[0].chars().all(|c| c.is_ascii_hexdigit()) {
            return Err(bad());
        }
        let client = f[4].to_string();
        out.push(Listed {
            id: f[0].to_string(),
            started,
            name: f[2].to_string(),
            peer: f[3].to_string(),
            client,
            learner,
        });
    }
    Ok(out)
}

/// One membership change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// `node` becomes a member: added unless `listed` says it already is
    /// (a run cut off after the add), started, promoted unless a voter.
    Join { node: String, name: String, peer: String, listed: Option<Listed> },
    /// A listed member no node of the definition wants (or a learner
    /// or never-started member not wanted as it is): removed; `node`
    /// is the cluster node at its peer address, whose step then stops it.
    /// `down`: its node is gone (removed without being reached), so the
    /// member answers nothing: removed first, before any member restarts,
    /// which raises the margin of the quorum rather than lowering it.
    Leave { node: Option<String>, member: Listed, down: bool },
}

impl Change {
    /// The node whose step belongs with this change, if any.
    pub fn node(&self) -> Option<&str> {
        match self {
            Change::Join { node, .. } => Some(node),
            Change::Leave { node, .. } => node.as_deref(),
        }
    }

    pub fn describe(&self) -> String {
        match self {
            Change::Join { name, peer, listed: None, .. } => format!("add member {name} ({peer})"),
            Change::Join { name, listed: Some(l), .. } if l.started => format!("promote member {name}"),
            Change::Join { name, .. } => format!("start member {name} (already added)"),
            Change::Leave { member, .. } => {
                let name = if member.name.is_empty() { "(unstarted)" } else { &member.name };
                format!("remove member {name} ({})", member.peer)
            }
        }
    }
}

/// The changes of one membership in a run, and the node that runs the
/// membership commands (a started voting member that stays, if any).
#[derive(Debug, Clone)]
pub struct MembershipPlan {
    pub name: String,
    pub spec: Membership,
    pub via: String,
    pub via_address: String,
    pub changes: Vec<Change>,
}

/// The host part of a URL like `https://10.0.0.1:2380` or `http://[::1]:2380`.
pub fn url_host(url: &str) -> &str {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let rest = rest.split('/').next().unwrap_or(rest);
    if let Some(v6) = rest.strip_prefix('[') {
        return v6.split(']').next().unwrap_or(v6);
    }
    rest.rsplit_once(':').map_or(rest, |(h, _)| h)
}

/// The changes that take `listed` to the members `spec` wants. `addresses`
/// maps every node of the definition to its address (to find the node of
/// a member that leaves); `held` names the nodes this run holds, one of
/// which must be a started voter to run the commands.
pub fn plan(
    name: &str,
    spec: &Membership,
    listed: &[Listed],
    addresses: &BTreeMap<String, String>,
    held: &[&str],
) -> Result<Option<MembershipPlan>, MembershipError> {
    let wanted = |peer: &str| spec.members.values().any(|m| m.peer == peer);
    let node_at = |peer: &str| addresses.iter().find(|(_, a)| a.as_str() == url_host(peer)).map(|(n, _)| n.clone());
    let leave = |m: &Listed| Change::Leave { node: node_at(&m.peer), member: m.clone(), down: false };

    // Learners (etcd allows one) and members never started go first: their
    // removal never touches quorum, and a learner left would block adds.
    let voter = |l: &Listed| l.started && !l.learner;
    let mut changes: Vec<Change> = listed.iter().filter(|m| !voter(m) && !wanted(&m.peer)).map(leave).collect();
    for (node, m) in &spec.members {
        let found = listed.iter().find(|l| l.peer == m.peer);
        // A member at this node's address under another peer URL (the
        // scheme or port changed): joining would wipe a running member.
        if let Some(other) = listed.iter().find(|l| found.is_none() && url_host(&l.peer) == url_host(&m.peer)) {
            return Err(MembershipError::PeerChanged {
                membership: name.to_string(),
                node: node.clone(),
                listed_peer: other.peer.clone(),
                wanted_peer: m.peer.clone(),
            });
        }
        if found.is_some_and(|l| l.started && !l.learner) {
            continue;
        }
        changes.push(Change::Join {
            node: node.clone(),
            name: m.name.clone(),
            peer: m.peer.clone(),
            listed: found.cloned(),
        });
    }
    changes.extend(listed.iter().filter(|m| voter(m) && !wanted(&m.peer)).map(leave));
    if changes.is_empty() {
        return Ok(None);
    }

    let held_node = |l: &Listed| node_at(&l.peer).filter(|n| held.contains(&n.as_str()));
    let via = listed
        .iter()
        .filter(|l| voter(l))
        .filter(|l| wanted(&l.peer))
        .chain(listed.iter().filter(|l| voter(l)).filter(|l| !wanted(&l.peer)))
        .find_map(held_node)
        .ok_or_else(|| MembershipError::NoStartedMember { membership: name.to_string() })?;
    // A leaving member that runs the commands leaves last of all.
    if let Some(k) = changes.iter().position(|c| matches!(c, Change::Leave { node: Some(n), .. } if *n == via)) {
        let own = changes.remove(k);
        changes.push(own);
    }
    let via_address = addresses.get(&via).cloned().unwrap_or_default();
    Ok(Some(MembershipPlan { name: name.to_string(), spec: spec.clone(), via, via_address, changes }))
}

/// `name=peer` of every member once `node` has joined, as the joining
/// member's initial cluster: the listed members (the joining one, not
/// started yet, by its wanted name). `Err` when another member has never
/// started (its name is unknown, and etcd would refuse the list).
pub fn initial_cluster(listed: &[Listed], name: &str, peer: &str) -> Result<String, MembershipError> {
    let mut parts = Vec::new();
    for l in listed {
        if l.peer == peer {
            continue;
        }
        if l.name.is_empty() {
            return Err(MembershipError::NeverStarted { id: l.id.clone(), peer: l.peer.clone() });
        }
        parts.push(format!("{}={}", l.name, l.peer));
    }
    parts.push(format!("{name}={peer}"));
    Ok(parts.join(","))
}

/// Whether a node's own member (`own`: the `list` run on that node, which
/// asks its own etcd) answers as a started member at `peer` of the same
/// cluster as `listed` (the via node's list): it lists itself started and
/// a started member `listed` also shows started. Its data must then not be
/// wiped, whatever `listed` says of it: the two members disagree, and only
/// a person can tell which one is wrong. With no `listed` to compare
/// with (the via did not answer), answering as started at `peer` is enough.
pub fn answers_as_member(own: &[Listed], peer: &str, listed: &[Listed]) -> bool {
    let started = |l: &&Listed| l.started && !l.learner;
    let shared = |o: &Listed| listed.iter().filter(started).any(|l| l.peer == o.peer);
    own.iter().filter(started).any(|l| l.peer == peer)
        && (listed.is_empty() || own.iter().filter(started).any(|o| o.peer != peer && shared(o)))
}

/// The member a node at `address` stops being without a `member remove`:
/// its own member (`own`: the `list` run on that node) answers as a
/// started member there of the same cluster as `listed`, yet `listed`
/// shows no member at that address, so no leave is planned for it. Its
/// step would stop it and remove its data all the same.
pub fn unlisted_member<'o>(own: &'o [Listed], address: &str, listed: &[Listed]) -> Option<&'o Listed> {
    if listed.iter().any(|l| url_host(&l.peer) == address) {
        return None;
    }
    own.iter()
        .find(|l| l.started && !l.learner && url_host(&l.peer) == address)
        .filter(|me| answers_as_member(own, &me.peer, listed))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::Member;

    fn spec(nodes: &[(&str, u8)]) -> Membership {
        Membership {
            add: "add".into(),
            handoff: "handoff".into(),
            join: "join".into(),
            list: "list".into(),
            members: nodes
                .iter()
                .map(|(n, i)| {
                    let m =
                        Member { name: n.to_string(), peer: peer(*i), wipe: "wipe".into(), aside: None, restore: None };
                    (n.to_string(), m)
                })
                .collect(),
            phase: "etcd".into(),
            promote: "promote".into(),
            remove: "remove".into(),
            ..Default::default()
        }
    }

    fn peer(i: u8) -> String {
        format!("https://10.0.0.{i}:2380")
    }

    fn addresses() -> BTreeMap<String, String> {
        (1..=5).map(|i| (format!("n{i}"), format!("10.0.0.{i}"))).collect()
    }

    fn started(i: u8) -> Listed {
        Listed {
            id: format!("{i:x}a"),
            started: true,
            name: format!("n{i}"),
            peer: peer(i),
            client: String::new(),
            learner: false,
        }
    }

    fn names(p: &MembershipPlan) -> Vec<String> {
        p.changes.iter().map(Change::describe).collect()
    }

    const ALL: [&str; 5] = ["n1", "n2", "n3", "n4", "n5"];

    #[test]
    fn a_node_s_own_member_of_the_same_cluster_is_a_member() {
        let (n1, n2, n3) = (started(1), started(2), started(3));
        // the via (n1) lists n2 only as added, not started
        let via = [n1.clone(), Listed { started: false, name: String::new(), learner: true, ..n2.clone() }];
        assert!(answers_as_member(&[n2.clone(), n1.clone(), n3.clone()], &peer(2), &via));
        // its own member started another cluster, or answers nothing
        assert!(!answers_as_member(&[n2.clone(), n3.clone()], &peer(2), &via));
        assert!(!answers_as_member(&[], &peer(2), &via));
        // no list to compare with: its own word is enough
        assert!(answers_as_member(&[n2.clone(), n3.clone()], &peer(2), &[]));
        // it does not list itself started (a learner, or another node's list)
        assert!(!answers_as_member(&[n1.clone(), Listed { learner: true, ..n2 }], &peer(2), &via));
        assert!(!answers_as_member(&[n1.clone(), n3], &peer(2), &via));
    }

    #[test]
    fn a_leaving_node_the_via_does_not_list_is_caught() {
        let (n1, n2, n3) = (started(1), started(2), started(3));
        let via = [n1.clone(), n2.clone()];
        let own = [n1.clone(), n2.clone(), n3.clone()];
        assert_eq!(unlisted_member(&own, "10.0.0.3", &via), Some(&n3));
        // listed: its leave is planned (member remove first)
        assert_eq!(unlisted_member(&own, "10.0.0.3", &[n1.clone(), n3.clone()]), None);
        // a member of another cluster, or none
        assert_eq!(unlisted_member(std::slice::from_ref(&n3), "10.0.0.3", &via), None);
        assert_eq!(unlisted_member(&[], "10.0.0.3", &via), None);
    }

    #[test]
    fn reads_etcdctl_member_list() {
        let text = "8e9e05c52164694d, started, n1, https://10.0.0.1:2380, https://10.0.0.1:2379, false\n\
                    91bc3c398fb3c146, unstarted, , https://10.0.0.4:2380, , true\n";
        let l = parse_list(text).unwrap();
        assert_eq!(l.len(), 2);
        let client = "https://10.0.0.1:2379".to_string();
        let first = Listed {
            id: "8e9e05c52164694d".into(),
            started: true,
            name: "n1".into(),
            peer: peer(1),
            client,
            learner: false,
        };
        assert_eq!(l[0], first);
        assert!(!l[1].started && l[1].learner && l[1].name.is_empty());
        assert!(matches!(parse_list("Error: context deadline exceeded"), Err(MembershipError::ListLine { .. })));
        // several peer URLs of one member stay one column
        let two = "a1, started, n1, https://10.0.0.1:2380,https://10.0.1.1:2380, https://10.0.0.1:2379, false";
        assert_eq!(parse_list(two).unwrap()[0].peer, "https://10.0.0.1:2380,https://10.0.1.1:2380");
        assert!(parse_list("").unwrap().is_empty());
    }

    #[test]
    fn nothing_to_do_when_every_wanted_member_is_a_started_voter() {
        let listed = [started(1), started(2), started(3)];
        assert!(plan("etcd", &spec(&[("n1", 1), ("n2", 2), ("n3", 3)]), &listed, &addresses(), &ALL)
            .unwrap()
            .is_none());
    }

    #[test]
    fn growing_adds_one_member_at_a_time_through_a_member_that_stays() {
        let listed = [started(1), started(2), started(3)];
        let want = spec(&[("n1", 1), ("n2", 2), ("n3", 3), ("n4", 4), ("n5", 5)]);
        let p = plan("etcd", &want, &listed, &addresses(), &ALL).unwrap().unwrap();
        assert_eq!(p.via, "n1");
        assert_eq!(names(&p), ["add member n4 (https://10.0.0.4:2380)", "add member n5 (https://10.0.0.5:2380)"]);
    }

    #[test]
    fn shrinking_removes_members_after_any_join_and_names_their_nodes() {
        let listed: Vec<Listed> = (1..=5).map(started).collect();
        let p = plan("etcd", &spec(&[("n1", 1), ("n2", 2), ("n3", 3)]), &listed, &addresses(), &ALL).unwrap().unwrap();
        let nodes: Vec<Option<&str>> = p.changes.iter().map(Change::node).collect();
        assert_eq!(nodes, [Some("n4"), Some("n5")]);
        assert!(p.changes.iter().all(|c| matches!(c, Change::Leave { .. })));

        // replacing n3 by n4: the join comes before the leave
        let p =
            plan("etcd", &spec(&[("n1", 1), ("n2", 2), ("n4", 4)]), &listed[..3], &addresses(), &ALL).unwrap().unwrap();
        assert_eq!(names(&p), ["add member n4 (https://10.0.0.4:2380)", "remove member n3 (https://10.0.0.3:2380)"]);
    }

    #[test]
    fn a_join_cut_off_half_way_is_finished_not_added_again() {
        let mut learner = started(4);
        learner.learner = true;
        let unstarted = Listed {
            id: "ff".into(),
            started: false,
            name: String::new(),
            peer: peer(5),
            client: String::new(),
            learner: true,
        };
        let listed = [started(1), started(2), started(3), learner, unstarted];
        let want = spec(&[("n1", 1), ("n2", 2), ("n3", 3), ("n4", 4), ("n5", 5)]);
        let p = plan("etcd", &want, &listed, &addresses(), &ALL).unwrap().unwrap();
        assert_eq!(names(&p), ["promote member n4", "start member n5 (already added)"]);
    }

    #[test]
    fn a_stale_unstarted_member_goes_first() {
        let stale = Listed {
            id: "ee".into(),
            started: false,
            name: String::new(),
            peer: peer(5),
            client: String::new(),
            learner: true,
        };
        let listed = [started(1), stale];
        let p = plan("etcd", &spec(&[("n1", 1), ("n2", 2), ("n3", 3)]), &listed, &addresses(), &ALL).unwrap().unwrap();
        assert_eq!(
            names(&p),
            [
                "remove member (unstarted) (https://10.0.0.5:2380)",
                "add member n2 (https://10.0.0.2:2380)",
                "add member n3 (https://10.0.0.3:2380)"
            ]
        );
    }

    #[test]
    fn the_commands_run_on_a_member_that_stays_and_the_run_holds() {
        let listed = [started(1), started(2), started(3)];
        let want = spec(&[("n2", 2), ("n3", 3), ("n4", 4)]);
        let p = plan("etcd", &want, &listed, &addresses(), &["n1", "n3", "n4"]).unwrap().unwrap();
        assert_eq!(p.via, "n3");
        // only a leaving member reachable: it still serves until it leaves
        let p = plan("etcd", &want, &listed, &addresses(), &["n1", "n4"]).unwrap().unwrap();
        assert_eq!(p.via, "n1");
        let e = plan("etcd", &want, &listed, &addresses(), &["n4"]).unwrap_err();
        assert!(matches!(e, MembershipError::NoStartedMember { .. }), "{e:?}");
        assert!(e.to_string().contains("no started member"), "{e}");
    }

    #[test]
    fn the_initial_cluster_of_a_joining_member_is_the_list_plus_itself() {
        let mut listed = vec![started(1), started(2)];
        listed.push(Listed {
            id: "c".into(),
            started: false,
            name: String::new(),
            peer: peer(3),
            client: String::new(),
            learner: true,
        });
        assert_eq!(
            initial_cluster(&listed, "n3", &peer(3)).unwrap(),
            "n1=https://10.0.0.1:2380,n2=https://10.0.0.2:2380,n3=https://10.0.0.3:2380"
        );
        listed.push(Listed {
            id: "d".into(),
            started: false,
            name: String::new(),
            peer: peer(4),
            client: String::new(),
            learner: true,
        });
        assert!(matches!(initial_cluster(&listed, "n3", &peer(3)), Err(MembershipError::NeverStarted { .. })));
    }

    #[test]
    fn a_changed_peer_url_is_refused_not_joined_over_a_running_member() {
        let listed = [started(1), started(2), started(3)];
        let mut want = spec(&[("n1", 1), ("n2", 2), ("n3", 3)]);
        want.members.get_mut("n3").unwrap().peer = "http://10.0.0.3:2380".into();
        let e = plan("etcd", &want, &listed, &addresses(), &ALL).unwrap_err();
        assert!(matches!(e, MembershipError::PeerChanged { .. }), "{e:?}");
        assert!(e.to_string().contains("n3 is a member as https://10.0.0.3:2380"), "{e}");
    }

    #[test]
    fn a_leaving_member_running_the_commands_leaves_last_and_a_stray_learner_first() {
        let mut learner = started(5);
        learner.learner = true;
        let listed = [started(1), started(2), started(3), learner];
        let want = spec(&[("n2", 2), ("n3", 3), ("n4", 4)]);
        let p = plan("etcd", &want, &listed, &addresses(), &["n1", "n4", "n5"]).unwrap().unwrap();
        assert_eq!(p.via, "n1");
        let nodes: Vec<Option<&str>> = p.changes.iter().map(Change::node).collect();
        assert_eq!(nodes, [Some("n5"), Some("n4"), Some("n1")]);
    }

    #[test]
    fn url_hosts() {
        assert_eq!(url_host("https://10.0.0.1:2380"), "10.0.0.1");
        assert_eq!(url_host("http://[fd00::1]:2380"), "fd00::1");
        assert_eq!(url_host("http://node-a:2380/"), "node-a");
    }
}
