//! `switch --max-unreachable` end to end without the lab: the one executor
//! drives three "nodes" that are directories on this machine (`LocalHost`,
//! node program under a prefix), all three members of a membership whose
//! `list` reads a file (three started members), and n3 cut off — the run
//! is handed the nodes it reached and the name of the one it did not, as
//! after connecting (`operation::run_reached_without`). What a user relies
//! on: a change the run does not need n3 for converges n1 and n2, leaves
//! n3 and its record entry as they were, and says so (exit 8's outcome);
//! the next switch with n3 back converges it; a change that needs n3 (a
//! member restarted with n3's member down, a hook run on n3) is refused
//! before anything changes; without the flag, or with more nodes down than
//! it allows, nothing changes either. Real nodes with a link down:
//! `tests/lab/partial.rs`.

use std::path::PathBuf;

use kdeploy::closure::{self, Closures};
use kdeploy::deploy::consent::Consent;
use kdeploy::deploy::error::{NeedsUnreachable, Stage};
use kdeploy::deploy::events::{Collect, Event, Sink};
use kdeploy::deploy::operation::run_reached_without;
use kdeploy::deploy::recap::{NodeStatus, Recap};
use kdeploy::deploy::record::Records;
use kdeploy::deploy::switch::{Reached, Switch};
use kdeploy::deploy::{Cancel, Error, Outcome, Report, RunOptions, SwitchOptions};
use kdeploy::store::{FileFetcher, Resolver, Store};
use kdeploy::transport::LocalHost;
use serde_json::{json, Value};

const NODES: [&str; 3] = ["n1", "n2", "n3"];

/// What one version of the cluster changes: the `base` file of every node
/// (no need of any other node), the `etcd` file of `etcd_on` (its step
/// restarts the member: a hook marked `disrupts`), and a `base` hook of
/// n1 that runs on `delegate` (none: no such hook).
#[derive(Clone, Copy)]
struct Version<'a> {
    base: u32,
    etcd: u32,
    etcd_on: &'a [&'a str],
    delegate: Option<&'a str>,
    /// The nodes the definition names (a node left out is pruned).
    defined: &'a [&'a str],
}

const V1: Version<'static> = Version { base: 1, etcd: 1, etcd_on: &NODES, delegate: None, defined: &NODES };

struct Project {
    dir: tempfile::TempDir,
}

impl Project {
    fn new() -> Project {
        let p = Project { dir: tempfile::tempdir().unwrap() };
        let members: String = NODES.iter().enumerate().map(|(i, n)| started(i + 1, n)).collect();
        for n in NODES {
            std::fs::create_dir_all(p.node_dir(n)).unwrap();
            std::fs::write(p.node_dir(n).join("list"), &members).unwrap();
        }
        p
    }

    fn node_dir(&self, node: &str) -> PathBuf {
        self.dir.path().join(node)
    }

    fn read(&self, node: &str, file: &str) -> String {
        std::fs::read_to_string(self.node_dir(node).join("root/etc/demo").join(file)).unwrap()
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("hooks.log")).unwrap_or_default()
    }

    fn resolver(&self) -> Resolver {
        Resolver::new(self.dir.path(), Store::new(self.dir.path().join(".kdeploy/store")), Box::new(FileFetcher))
    }

    fn records(&self) -> Records {
        Records::load(&self.dir.path().join(".kdeploy")).unwrap()
    }

    fn closures(&self, v: Version<'_>) -> Closures {
        let log = self.dir.path().join("hooks.log").display().to_string();
        let file = |name: &str, text: String| {
            json!({"group": "root", "mode": "0644", "owner": "root", "path": format!("/etc/demo/{name}"),
                   "source": {"text": text}})
        };
        let phase = |name: &str, files: Vec<Value>, hooks: Vec<Value>| {
            json!({"activate": true, "checks": [], "directories": [], "files": files, "hooks": hooks,
                   "name": name, "units": []})
        };
        let node = |name: &str| {
            let etcd = if v.etcd_on.contains(&name) { v.etcd } else { 1 };
            let restart = json!({"name": "restart-member", "run": format!("echo {name} etcd {etcd} >> {log}"),
                                 "unless": null, "when": "post", "disrupts": true});
            let mut base_hooks = vec![];
            if let (Some(d), "n1") = (v.delegate, name) {
                base_hooks.push(json!({"name": "on-other", "run": format!("echo {name} on-other >> {log}"),
                                       "unless": null, "when": "post", "delegate": d}));
            }
            json!({
                "address": address(name), "roles": [], "settings": {},
                "ssh": {"jumpHost": null, "key": null, "port": 22, "user": "root"},
                "phases": [
                    phase("base", vec![file("base.conf", format!("base {} on {name}\n", v.base))], base_hooks),
                    phase("etcd", vec![file("etcd.env", format!("etcd {etcd} on {name}\n"))], vec![restart]),
                ],
            })
        };
        let member = |n: &str| json!({"name": n, "peer": peer(n), "wipe": "true"});
        let defined = || v.defined.iter();
        let cluster = json!({
            "name": "local", "phaseOrder": ["base", "etcd"], "schemaVersion": closure::SCHEMA_VERSION,
            "settings": {}, "warnings": [],
            "nodes": defined().map(|n| (n.to_string(), node(n))).collect::<serde_json::Map<_, _>>(),
            "memberships": {"etcd": {
                "phase": "etcd",
                "members": defined().map(|n| (n.to_string(), member(n))).collect::<serde_json::Map<_, _>>(),
                "list": "cat \"$NODE_DIR/list\"",
                // the member's line leaves the list of the node that runs it
                "remove": "grep -v \"^$KDEPLOY_MEMBER_ID,\" \"$NODE_DIR/list\" > \"$NODE_DIR/list.new\" && mv \"$NODE_DIR/list.new\" \"$NODE_DIR/list\"",
                "add": "false", "promote": "false", "handoff": "true", "join": "true",
            }},
            "removeNode": {"on": ["n2", "n1"], "run": format!("echo \"removed $KDEPLOY_NODE_NAME on $(basename $NODE_DIR)\" >> {log}")},
        });
        closure::load(&cluster.to_string(), &self.resolver()).unwrap()
    }

    /// A switch of `v` over the nodes not in `down` (reported unreachable
    /// first, as connecting does), tolerating `max` unreachable ones.
    async fn switch(&self, v: Version<'_>, down: &[&str], max: usize) -> (Result<Report, Error>, Vec<Event>) {
        self.switch_with(v, down, SwitchOptions { max_unreachable: max, ..Default::default() }).await
    }

    /// [`Project::switch`] with its options.
    async fn switch_with(
        &self,
        v: Version<'_>,
        down: &[&str],
        opts: SwitchOptions,
    ) -> (Result<Report, Error>, Vec<Event>) {
        let up: Vec<&str> = NODES.iter().copied().filter(|n| !down.contains(n)).collect();
        let hosts: Vec<LocalHost> =
            up.iter().map(|n| LocalHost::new(n).with_env("NODE_DIR", self.node_dir(n).to_str().unwrap())).collect();
        let prefixes: Vec<String> = up.iter().map(|n| self.node_dir(n).join("root").display().to_string()).collect();
        let reached: Vec<Reached<'_>> =
            hosts.iter().zip(&prefixes).map(|(h, p)| Reached { host: h, prefix: p }).collect();
        let opts = SwitchOptions {
            run: RunOptions { consent: opts.run.consent.clone(), ..RunOptions::at(self.dir.path().join(".kdeploy")) },
            ..opts
        };
        let sink = Collect::default();
        for n in down {
            sink.emit(Event::NodeUnreachable { node: n.to_string(), reason: "link down".into() });
        }
        let closures = self.closures(v);
        let op = Switch { closures: &closures, resolver: &self.resolver(), opts: &opts };
        let unreachable: Vec<String> = down.iter().map(|n| n.to_string()).collect();
        let r = run_reached_without(&op, &opts.run, &reached, &unreachable, Cancel::default(), &sink).await;
        (r, sink.0.into_inner().unwrap())
    }

    /// What every node's files say, and the hooks that ran.
    fn state(&self) -> (Vec<String>, String) {
        let files = NODES.iter().flat_map(|n| [self.read(n, "base.conf"), self.read(n, "etcd.env")]).collect();
        (files, self.log())
    }
}

fn address(node: &str) -> String {
    format!("10.0.0.{}", &node[1..])
}

fn peer(node: &str) -> String {
    format!("http://{}:2380", address(node))
}

/// A `list` line of a started voting member.
fn started(id: usize, node: &str) -> String {
    format!("00a{id}, started, {node}, {}, http://{}:2379, false\n", peer(node), address(node))
}

fn outcome(r: Result<Report, Error>, events: &[Event]) -> Outcome {
    r.unwrap_or_else(|e| panic!("{e}: {events:#?}")).outcome
}

#[tokio::test(flavor = "multi_thread")]
async fn a_change_that_does_not_need_the_unreachable_node_converges_the_others_and_waits_for_it() {
    let p = Project::new();
    let (r, events) = p.switch(V1, &[], 0).await;
    assert_eq!(outcome(r, &events), Outcome::Ok);
    let before = p.records().latest().unwrap().nodes["n3"].clone();

    // base changes on every node; n3 is cut off
    let v2 = Version { base: 2, ..V1 };
    let (r, events) = p.switch(v2, &["n3"], 1).await;
    assert_eq!(outcome(r, &events), Outcome::Partial, "{events:#?}");
    for n in ["n1", "n2"] {
        assert_eq!(p.read(n, "base.conf"), format!("base 2 on {n}\n"));
    }
    assert_eq!(p.read("n3", "base.conf"), "base 1 on n3\n");
    assert!(
        events.iter().any(|e| matches!(e, Event::NodeSkipped { node, behind: true } if node == "n3")),
        "{events:#?}"
    );
    // the record moves n1 and n2 on and keeps n3 where it was
    let latest = p.records().latest().unwrap().clone();
    let kept = &latest.nodes["n3"];
    assert_eq!((kept.generation, &kept.hash), (before.generation, &before.hash));
    assert!(latest.nodes["n1"].generation > before.generation);

    // the recap says n3 was unreachable and skipped
    let recap = Recap::new("local", NODES.map(String::from));
    events.into_iter().for_each(|e| recap.emit(e));
    let data = recap.data();
    let n3 = &data.nodes["n3"];
    assert_eq!((n3.status, n3.skipped), (NodeStatus::Unreachable, true));
    assert_eq!(data.count(NodeStatus::Changed), 2);
    let text = data.text();
    assert!(text.contains("link down") && text.contains("its change waits for the next switch"), "{text}");
    assert!(data.json().contains("\"skipped\": true"), "{}", data.json());

    // n3 back: it converges, the others have nothing left to do
    let (r, events) = p.switch(v2, &[], 1).await;
    assert_eq!(outcome(r, &events), Outcome::Ok, "{events:#?}");
    assert_eq!(p.read("n3", "base.conf"), "base 2 on n3\n");
    for n in ["n1", "n2"] {
        assert!(events.iter().any(|e| matches!(e, Event::NodeUnchanged { node } if node == n)), "{n}: {events:#?}");
    }
    let (r, events) = p.switch(v2, &[], 0).await;
    assert!(events.iter().all(|e| !matches!(e, Event::NodeChanged { .. })), "{events:#?}");
    assert_eq!(outcome(r, &events), Outcome::Ok);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_change_that_needs_the_unreachable_node_changes_nothing() {
    let p = Project::new();
    let (r, events) = p.switch(V1, &[], 0).await;
    assert_eq!(outcome(r, &events), Outcome::Ok);
    let before = p.state();
    let recorded = p.records().all().len();

    // n1's and n2's members restart while n3's is down: one of three up
    let members = Version { etcd: 2, etcd_on: &["n1", "n2"], ..V1 };
    let (r, events) = p.switch(members, &["n3"], 1).await;
    let e = r.expect_err("restarting members with n3 down must be refused");
    assert_eq!(e.stage(), Stage::Refused);
    assert!(
        matches!(&e, Error::NeedsUnreachable(NeedsUnreachable::Quorum { down, members: 3, quorum: 2, .. }) if down == &["n3"]),
        "{e:?}"
    );
    let said = e.to_string();
    assert!(said.contains("n3 unreachable") && said.contains("nothing was changed"), "{said}");
    assert!(!events.iter().any(|e| matches!(e, Event::NodeSkipped { .. })), "{events:#?}");

    // a hook of n1 that runs on n3
    let on_n3 = Version { base: 2, delegate: Some("n3"), ..V1 };
    let (r, _) = p.switch(on_n3, &["n3"], 1).await;
    let e = r.expect_err("a hook delegated to n3 must be refused");
    assert!(matches!(&e, Error::NeedsUnreachable(NeedsUnreachable::Delegate(d)) if d.delegate == "n3"));

    // without the flag, or with more nodes down than it allows: as ever
    let base = Version { base: 2, ..V1 };
    let (r, events) = p.switch(base, &["n3"], 0).await;
    assert_eq!(outcome(r, &events), Outcome::Unreachable);
    let (r, events) = p.switch(base, &["n2", "n3"], 1).await;
    assert_eq!(outcome(r, &events), Outcome::Unreachable);
    // every node down: nothing to go on with
    let (r, events) = p.switch(base, &NODES, 3).await;
    assert_eq!(outcome(r, &events), Outcome::Unreachable);

    assert_eq!(p.state(), before, "a refused run changed a node");
    assert_eq!(p.records().all().len(), recorded, "a refused run recorded a generation");
}

/// A node that is down for good, left out of the definition and pruned:
/// removed without being reached — its member leaves through a live
/// member, the cluster's `removeNode` runs on the first control plane
/// held — after consent; it is kept as gone in the record, tried by every
/// later switch, and reset once it answers again.
#[tokio::test(flavor = "multi_thread")]
async fn a_dead_node_is_removed_through_the_others_and_reset_when_it_comes_back() {
    let p = Project::new();
    let (r, events) = p.switch(V1, &[], 0).await;
    assert_eq!(outcome(r, &events), Outcome::Ok);
    let without_n3 = Version { defined: &["n1", "n2"], ..V1 };

    // not asked: refused before anything changes, naming what it would do
    let absent = SwitchOptions {
        prune: true,
        run: RunOptions { consent: Consent::Absent, ..Default::default() },
        ..Default::default()
    };
    let (r, _) = p.switch_with(without_n3, &["n3"], absent).await;
    let refused = r.err().map(|e| e.to_string()).unwrap_or_default();
    assert!(refused.contains("remove n3 without reaching it"), "{refused}");
    assert!(p.log().lines().all(|l| !l.starts_with("removed")), "{}", p.log());

    let (r, events) = p.switch_with(without_n3, &["n3"], SwitchOptions { prune: true, ..Default::default() }).await;
    assert_eq!(outcome(r, &events), Outcome::Ok, "{events:#?}");
    assert!(p.log().contains("removed n3 on n2"), "removeNode ran on the first control plane held: {}", p.log());
    let list = std::fs::read_to_string(p.node_dir("n1").join("list")).unwrap();
    assert!(!list.contains(", n3,"), "n3's member is still listed: {list}");
    let recap = Recap::new("local", NODES.map(String::from));
    events.iter().cloned().for_each(|e| recap.emit(e));
    assert_eq!(recap.data().nodes["n3"].status, NodeStatus::Gone, "{events:#?}");
    let latest = p.records().latest().cloned().unwrap();
    assert!(latest.gone.contains_key("n3") && !latest.nodes.contains_key("n3"), "{latest:?}");
    assert!(p.node_dir("n3").join("root/var/lib/kdeploy").exists(), "n3 was reached");

    // still down: the next plain switch goes on without it, quietly
    let (r, events) = p.switch(without_n3, &["n3"], 0).await;
    assert_eq!(outcome(r, &events), Outcome::Ok, "{events:#?}");

    // back: the next plain switch resets it and forgets it
    let (r, events) = p.switch(without_n3, &[], 0).await;
    assert_eq!(outcome(r, &events), Outcome::Ok, "{events:#?}");
    assert!(!p.node_dir("n3").join("root/var/lib/kdeploy").exists(), "n3 not reset");
    assert!(!p.node_dir("n3").join("root/etc/demo/etcd.env").exists(), "n3 not reset");
    assert!(p.records().latest().is_some_and(|g| g.gone.is_empty()), "n3 still recorded as gone");
}
