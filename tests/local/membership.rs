//! A membership change through the real executor without the lab: two
//! "nodes" that are directories reached through `LocalHost`, and a
//! membership whose commands stand in for etcdctl (each node's `list`
//! prints what that node's member would answer, from a file in its
//! directory; `add` and `remove` edit the via node's file; `wipe` removes
//! the node's "member data"). What a user relies on: a node the via lists
//! as not started, whose own member answers as a started member of the
//! same cluster, keeps its data — the join stops and says why — while a
//! node whose member answers for another cluster (or not at all) is wiped
//! and joins. Real etcd joins are in `tests/lab/membership.rs`.

use std::path::{Path, PathBuf};

use kdeploy::closure::{self, Closures};
use kdeploy::deploy::events::{Collect, Event};
use kdeploy::deploy::switch::{switch_reached, Reached};
use kdeploy::deploy::Report;
use kdeploy::deploy::RunOptions;
use kdeploy::deploy::{Cancel, Outcome, SwitchOptions};
use kdeploy::store::{FileFetcher, Resolver, Store};
use kdeploy::transport::LocalHost;
use serde_json::json;

const NODES: [&str; 2] = ["n1", "n2"];

fn peer(node: &str) -> String {
    format!("http://{}:2380", address(node))
}

fn address(node: &str) -> String {
    format!("10.0.0.{}", &node[1..])
}

/// A `list` line of a started voting member.
fn started(id: &str, node: &str) -> String {
    format!("{id}, started, {node}, {}, http://{}:2379, false\n", peer(node), address(node))
}

struct Project {
    dir: tempfile::TempDir,
}

impl Project {
    fn new() -> Project {
        let p = Project { dir: tempfile::tempdir().unwrap() };
        for n in NODES {
            std::fs::create_dir_all(p.member_data(n)).unwrap();
            std::fs::write(p.member_data(n).join("db"), format!("{n}'s data\n")).unwrap();
        }
        p
    }

    fn node_dir(&self, node: &str) -> PathBuf {
        self.dir.path().join(node)
    }

    fn member_data(&self, node: &str) -> PathBuf {
        self.node_dir(node).join("data/member")
    }

    /// What `node`'s own member answers to `list` (none: it fails).
    fn answers(&self, node: &str, lines: Option<&str>) {
        let f = self.node_dir(node).join("list");
        match lines {
            Some(l) => std::fs::write(f, l).unwrap(),
            None => drop(std::fs::remove_file(f)),
        }
    }

    fn resolver(&self) -> Resolver {
        Resolver::new(self.dir.path(), Store::new(self.dir.path().join(".kdeploy/store")), Box::new(FileFetcher))
    }

    /// Both nodes wanted as members; phase `etcd` has a file naming `version`.
    fn closures(&self, version: u32) -> Closures {
        let node = |name: &str| {
            json!({
                "address": address(name), "roles": [], "settings": {},
                "ssh": {"jumpHost": null, "key": null, "port": 22, "user": "root"},
                "phases": [{"activate": true, "checks": [], "directories": [], "hooks": [], "name": "etcd",
                            "units": [],
                            "files": [{"group": "root", "mode": "0644", "owner": "root", "path": "/etc/demo/etcd.env",
                                       "source": {"text": format!("version {version}\n")}}]}],
            })
        };
        let member =
            |name: &str| json!({"name": name, "peer": peer(name), "wipe": "rm -rf -- \"$NODE_DIR/data/member\""});
        let cluster = json!({
            "name": "local", "phaseOrder": ["etcd"], "schemaVersion": closure::SCHEMA_VERSION,
            "settings": {}, "warnings": [],
            "nodes": {"n1": node("n1"), "n2": node("n2")},
            "memberships": {"etcd": {
                "phase": "etcd",
                "members": {"n1": member("n1"), "n2": member("n2")},
                "list": "cat \"$NODE_DIR/list\"",
                "add": "printf '00b2, unstarted, , %s, , true\\n' \"$KDEPLOY_MEMBER_PEER\" >> \"$NODE_DIR/list\"",
                "promote": "true",
                "remove": "sed -i \"/^$KDEPLOY_MEMBER_ID, /d\" \"$NODE_DIR/list\"",
                "handoff": "true",
                "join": "true",
            }},
        });
        closure::load(&cluster.to_string(), &self.resolver()).unwrap()
    }

    async fn switch(&self, closures: &Closures) -> (Outcome, Vec<Event>) {
        let hosts: Vec<LocalHost> =
            NODES.iter().map(|n| LocalHost::new(n).with_env("NODE_DIR", self.node_dir(n).to_str().unwrap())).collect();
        let prefixes: Vec<String> = NODES.iter().map(|n| self.node_dir(n).join("root").display().to_string()).collect();
        let reached: Vec<Reached<'_>> =
            hosts.iter().zip(&prefixes).map(|(h, p)| Reached { host: h, prefix: p }).collect();
        let opts = SwitchOptions { run: RunOptions::at(self.dir.path().join(".kdeploy")), ..Default::default() };
        let sink = Collect::default();
        let Report { outcome, .. } =
            switch_reached(closures, &self.resolver(), &opts, &reached, Cancel::default(), &sink).await.unwrap();
        (outcome, sink.0.into_inner().unwrap())
    }
}

fn has_data(dir: &Path) -> bool {
    dir.join("db").exists()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_live_member_the_via_lists_as_absent_keeps_its_data() {
    let p = Project::new();
    // first switch: no member answers, none ran: nothing to change
    assert_eq!(p.switch(&p.closures(1)).await.0, Outcome::Ok);

    // n1 (the via) lists only itself; n2's own member answers as a started
    // member of the same cluster, n1 among its members
    p.answers("n1", Some(&started("00a1", "n1")));
    p.answers("n2", Some(&(started("00a2", "n2") + &started("00a1", "n1"))));
    let (outcome, events) = p.switch(&p.closures(2)).await;
    assert_eq!(outcome, Outcome::Failed, "{events:#?}");
    assert!(has_data(&p.member_data("n2")), "n2's member data was wiped: {events:#?}");
    let said = events.iter().find_map(|e| match e {
        Event::Failed { node, message, .. } if node == "n2" => Some(message.clone()),
        _ => None,
    });
    let said = said.unwrap_or_else(|| panic!("no failure on n2: {events:#?}"));
    assert!(said.contains("not wiping n2's member data"), "{said}");
    assert!(said.contains("answers as a started member of the same cluster"), "{said}");
    // the learner the via added is taken back
    assert_eq!(std::fs::read_to_string(p.node_dir("n1").join("list")).unwrap(), started("00a1", "n1"));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_node_whose_member_is_of_another_cluster_or_silent_is_wiped_and_joins() {
    for own in [Some(started("00c2", "n2")), None] {
        let p = Project::new();
        assert_eq!(p.switch(&p.closures(1)).await.0, Outcome::Ok);
        p.answers("n1", Some(&started("00a1", "n1")));
        p.answers("n2", own.as_deref());
        let (outcome, events) = p.switch(&p.closures(2)).await;
        assert_eq!(outcome, Outcome::Ok, "{own:?}: {events:#?}");
        assert!(!has_data(&p.member_data("n2")), "{own:?}: n2's stale member data stays");
        assert!(has_data(&p.member_data("n1")), "{own:?}");
    }
}
