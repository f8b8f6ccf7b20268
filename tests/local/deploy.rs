//! `switch` end to end without the lab: the executor (`switch_reached`)
//! drives two "nodes" that are directories on this machine, reached through
//! `LocalHost` with the node program under a prefix. The closures have
//! files, hooks and checks but no units (systemd is the lab's:
//! `tests/lab/switch.rs`, `tests/lab/switch_failures.rs`). What a user relies on: the
//! first switch converges every node, a re-run changes nothing, a failing
//! check on one node puts *both* back on the generation they were on.

use std::path::PathBuf;

use kdeploy::closure::{self, Closures};
use kdeploy::deploy::error::{RecordsError, Stage};
use kdeploy::deploy::events::{Collect, Event};
use kdeploy::deploy::record;
use kdeploy::deploy::switch::{switch_reached, Reached};
use kdeploy::deploy::RunOptions;
use kdeploy::deploy::{Cancel, Outcome, SwitchOptions};
use kdeploy::deploy::{Error, Report};
use kdeploy::node::Node;
use kdeploy::store::{FileFetcher, Resolver, Store};
use kdeploy::transport::LocalHost;
use serde_json::{json, Value};

const NODES: [&str; 2] = ["n1", "n2"];

/// A project directory with one prefix per node, and the deployer state.
struct Lab {
    dir: tempfile::TempDir,
}

impl Lab {
    fn new() -> Lab {
        Lab { dir: tempfile::tempdir().unwrap() }
    }

    fn prefix(&self, node: &str) -> PathBuf {
        self.dir.path().join("nodes").join(node)
    }

    /// A file as the node sees it (below its prefix).
    fn read(&self, node: &str, path: &str) -> String {
        std::fs::read_to_string(self.prefix(node).join(path.trim_start_matches('/'))).unwrap()
    }

    fn options(&self) -> SwitchOptions {
        SwitchOptions { run: RunOptions::at(self.dir.path().join(".kdeploy")), ..Default::default() }
    }

    fn resolver(&self) -> Resolver {
        Resolver::new(self.dir.path(), Store::new(self.dir.path().join(".kdeploy/store")), Box::new(FileFetcher))
    }

    /// Generation `version` of the cluster: phases `base` then `app`, each
    /// file naming node and version; a post hook of `app` appends to a log
    /// in the project directory; `app`'s check fails on `failing_on`.
    fn closures(&self, version: u32, failing_on: Option<&str>) -> Closures {
        self.load(self.cluster(version, failing_on))
    }

    fn load(&self, cluster: Value) -> Closures {
        closure::load(&cluster.to_string(), &self.resolver()).unwrap()
    }

    /// The cluster value behind [`Lab::closures`].
    fn cluster(&self, version: u32, failing_on: Option<&str>) -> Value {
        let log = self.dir.path().join("hooks.log");
        let node = |name: &str| {
            let file = |path: &str, what: &str| {
                json!({"group": "root", "mode": "0644", "owner": "root", "path": path,
                       "source": {"text": format!("{what} {version} on {name}\n")}})
            };
            let check = if failing_on == Some(name) { "false" } else { "true" };
            json!({
                "address": "127.0.0.1", "roles": [], "settings": {},
                "ssh": {"jumpHost": null, "key": null, "port": 22, "user": "root"},
                "phases": [
                    phase("base", vec![file("/etc/demo/base.conf", "base")], json!([]), json!([])),
                    phase(
                        "app",
                        vec![file("/etc/demo/app.conf", "app")],
                        json!([{"name": "log", "run": format!("echo {name} {version} >> {}", log.display()),
                                "unless": null, "when": "post"}]),
                        json!([{"delay": 0, "name": "healthy", "retries": 0, "run": check}]),
                    ),
                ],
            })
        };
        json!({
            "name": "local", "phaseOrder": ["base", "app"], "schemaVersion": closure::SCHEMA_VERSION,
            "settings": {}, "warnings": [],
            "nodes": {"n1": node("n1"), "n2": node("n2")},
        })
    }

    /// One switch over both nodes; returns the outcome and every event.
    async fn switch(&self, closures: &Closures) -> (Outcome, Vec<Event>) {
        let (r, events) = self.try_switch(closures).await;
        (r.unwrap().outcome, events)
    }

    /// One switch over both nodes, as the engine ends it, and every event.
    async fn try_switch(&self, closures: &Closures) -> (Result<Report, Error>, Vec<Event>) {
        let hosts: Vec<LocalHost> = NODES.iter().map(|n| LocalHost::new(n)).collect();
        let prefixes: Vec<String> = NODES.iter().map(|n| self.prefix(n).display().to_string()).collect();
        let reached: Vec<Reached<'_>> =
            hosts.iter().zip(&prefixes).map(|(h, p)| Reached { host: h, prefix: p }).collect();
        let sink = Collect::default();
        let r = switch_reached(closures, &self.resolver(), &self.options(), &reached, Cancel::default(), &sink).await;
        (r, sink.0.into_inner().unwrap())
    }

    /// (committed generation, next free number) as the node reports it.
    async fn status(&self, node: &str) -> (Option<u64>, u64) {
        let host = LocalHost::new(node);
        let prefix = self.prefix(node).display().to_string();
        let st = Node::install_with_prefix(&host, &prefix).await.unwrap().status().await.unwrap();
        (st.current.map(|c| c.0), st.next)
    }

    fn hook_log(&self) -> Vec<String> {
        let text = std::fs::read_to_string(self.dir.path().join("hooks.log")).unwrap_or_default();
        let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
        lines.sort();
        lines
    }

    fn recorded_generations(&self) -> Vec<u64> {
        record::Records::load(&self.options().run.state_dir).unwrap().all().iter().map(|g| g.number).collect()
    }
}

fn phase(name: &str, files: Vec<Value>, hooks: Value, checks: Value) -> Value {
    json!({"activate": true, "checks": checks, "directories": [], "files": files, "hooks": hooks,
           "name": name, "units": []})
}

fn count(events: &[Event], what: impl Fn(&Event) -> bool) -> usize {
    events.iter().filter(|e| what(e)).count()
}

fn base_and_app(lab: &Lab, node: &str) -> (String, String) {
    (lab.read(node, "/etc/demo/base.conf"), lab.read(node, "/etc/demo/app.conf"))
}

fn expected(version: u32, node: &str) -> (String, String) {
    (format!("base {version} on {node}\n"), format!("app {version} on {node}\n"))
}

#[tokio::test(flavor = "multi_thread")]
async fn first_switch_converges_both_nodes_and_a_rerun_is_a_no_op() {
    let lab = Lab::new();
    let one = lab.closures(1, None);
    let (outcome, events) = lab.switch(&one).await;
    assert_eq!(outcome, Outcome::Ok, "{events:#?}");
    for n in NODES {
        assert_eq!(base_and_app(&lab, n), expected(1, n));
        assert_eq!(lab.status(n).await, (Some(1), 2));
    }
    assert_eq!(count(&events, |e| matches!(e, Event::Committed { generation: 1, .. })), 2);
    assert_eq!(count(&events, |e| matches!(e, Event::CheckPassed { .. })), 2);
    assert_eq!(lab.hook_log(), ["n1 1", "n2 1"]);
    assert_eq!(lab.recorded_generations(), [1]);

    let (outcome, events) = lab.switch(&one).await;
    assert_eq!(outcome, Outcome::Ok, "{events:#?}");
    assert_eq!(count(&events, |e| matches!(e, Event::NodeUnchanged { .. })), 2, "{events:#?}");
    let busy = |e: &Event| {
        matches!(
            e,
            Event::PhaseStarted { .. } | Event::BlobsPushed { .. } | Event::HookRan { .. } | Event::Committed { .. }
        )
    };
    assert_eq!(count(&events, busy), 0, "{events:#?}");
    for n in NODES {
        assert_eq!(lab.status(n).await, (Some(1), 2));
    }
    assert_eq!(lab.hook_log(), ["n1 1", "n2 1"]);
    assert_eq!(lab.recorded_generations(), [1]);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_failing_check_on_one_node_switches_both_back() {
    let lab = Lab::new();
    assert_eq!(lab.switch(&lab.closures(1, None)).await.0, Outcome::Ok);

    let (outcome, events) = lab.switch(&lab.closures(2, Some("n2"))).await;
    assert_eq!(outcome, Outcome::Failed, "{events:#?}");
    assert!(events
        .iter()
        .any(|e| matches!(e, Event::Failed { node, phase: Some(p), .. } if node == "n2" && p == "app")));
    // both phases of both nodes had switched to generation 2; all went back
    assert_eq!(count(&events, |e| matches!(e, Event::RolledBack { .. })), 4, "{events:#?}");
    assert_eq!(count(&events, |e| matches!(e, Event::RollbackFailed { .. })), 0, "{events:#?}");
    for n in NODES {
        assert_eq!(base_and_app(&lab, n), expected(1, n), "{n}");
        // still committed on 1; generation 2 stays staged, so 3 is next
        assert_eq!(lab.status(n).await, (Some(1), 3), "{n}");
    }
    assert_eq!(lab.recorded_generations(), [1]);

    // the fixed closure goes through on both
    let (outcome, events) = lab.switch(&lab.closures(2, None)).await;
    assert_eq!(outcome, Outcome::Ok, "{events:#?}");
    for n in NODES {
        assert_eq!(base_and_app(&lab, n), expected(2, n));
    }
}

/// A check declared an hour apart (`delay` 3600) that fails once, as a
/// check does while what it waits for is a moment away: its second try
/// comes a quarter second later, not an hour (the run would otherwise
/// outlast the timeout below), and the switch goes through.
#[tokio::test(flavor = "multi_thread")]
async fn a_check_that_fails_once_is_tried_again_soon_whatever_its_delay() {
    let lab = Lab::new();
    let mut cluster = lab.cluster(1, None);
    for n in NODES {
        let mark = lab.dir.path().join(format!("{n}.tried"));
        let run = format!("if [ -e '{0}' ]; then exit 0; fi; : > '{0}'; exit 1", mark.display());
        cluster["nodes"][n]["phases"][1]["checks"] = json!([{"delay": 3600, "name": "soon", "retries": 1, "run": run}]);
    }
    let closures = lab.load(cluster);
    let run = tokio::time::timeout(std::time::Duration::from_secs(120), lab.switch(&closures));
    let (outcome, events) = run.await.expect("the second try waited for the check's whole delay");
    assert_eq!(outcome, Outcome::Ok, "{events:#?}");
    let second_try = |e: &Event| matches!(e, Event::CheckPassed { check, tries: 2, .. } if check == "soon");
    assert_eq!(count(&events, second_try), 2, "{events:#?}");
    for n in NODES {
        assert_eq!(base_and_app(&lab, n), expected(1, n));
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn dropping_a_phase_and_nothing_else_commits_a_new_generation() {
    let lab = Lab::new();
    assert_eq!(lab.switch(&lab.closures(1, None)).await.0, Outcome::Ok);

    // the same cluster without the `app` phase: nothing to stage, only a
    // phase to take away, and still a new generation to commit
    let mut cluster = lab.cluster(1, None);
    cluster["phaseOrder"] = json!(["base"]);
    for n in NODES {
        cluster["nodes"][n]["phases"].as_array_mut().unwrap().retain(|p| p["name"] != "app");
    }
    let dropped = lab.load(cluster);
    let (outcome, events) = lab.switch(&dropped).await;
    assert_eq!(outcome, Outcome::Ok, "{events:#?}");
    for n in NODES {
        assert!(!lab.prefix(n).join("etc/demo/app.conf").exists(), "app.conf left behind on {n}");
        assert_eq!(lab.read(n, "/etc/demo/base.conf"), expected(1, n).0);
        assert_eq!(lab.status(n).await, (Some(2), 3), "{n}");
    }

    let (outcome, events) = lab.switch(&dropped).await;
    assert_eq!(outcome, Outcome::Ok, "{events:#?}");
    assert_eq!(count(&events, |e| matches!(e, Event::NodeUnchanged { .. })), 2, "{events:#?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_record_that_cannot_be_written_says_the_nodes_changed_and_the_next_switch_writes_it() {
    let lab = Lab::new();
    assert_eq!(lab.switch(&lab.closures(1, None)).await.0, Outcome::Ok);
    // the next record's temporary file cannot be created: a directory stands there
    let blocker = lab.dir.path().join(".kdeploy/generations/.2.json.tmp");
    std::fs::create_dir_all(blocker.join("x")).unwrap();
    let (r, events) = lab.try_switch(&lab.closures(2, None)).await;
    let e = r.expect_err("the record was not written");
    assert!(matches!(e, Error::NotRecorded(_)) && e.stage() == Stage::NotRecorded && !e.nothing_changed(), "{e:?}");
    assert!(e.to_string().contains("run `kdeploy switch` again"), "{e}");
    assert_eq!(count(&events, |e| matches!(e, Event::Committed { generation: 2, .. })), 2, "{events:#?}");
    for n in NODES {
        assert_eq!(base_and_app(&lab, n), expected(2, n));
        assert_eq!(lab.status(n).await.0, Some(2));
    }
    assert_eq!(lab.recorded_generations(), [1]);
    // the cause gone, a switch changes nothing on the nodes and records where they are
    std::fs::remove_dir_all(&blocker).unwrap();
    let (outcome, events) = lab.switch(&lab.closures(2, None)).await;
    assert_eq!(outcome, Outcome::Ok, "{events:#?}");
    assert_eq!(count(&events, |e| matches!(e, Event::NodeUnchanged { .. })), 2, "{events:#?}");
    assert_eq!(lab.recorded_generations(), [1, 2]);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_damaged_latest_record_stops_the_run_before_anything_changes() {
    let lab = Lab::new();
    assert_eq!(lab.switch(&lab.closures(1, None)).await.0, Outcome::Ok);
    let latest = lab.dir.path().join(".kdeploy/generations/1.json");
    let text = std::fs::read_to_string(&latest).unwrap();
    std::fs::write(&latest, &text[..text.len() / 2]).unwrap();
    let (r, events) = lab.try_switch(&lab.closures(2, None)).await;
    let e = r.expect_err("refused");
    assert!(matches!(e, Error::Records(RecordsError::Unreadable { .. })), "{e:?}");
    assert!(e.stage() == Stage::Refused && e.nothing_changed(), "{e:?}");
    assert!(e.to_string().contains("1.json"), "{e}");
    assert!(events.is_empty(), "a node was opened: {events:#?}");
    for n in NODES {
        assert_eq!(base_and_app(&lab, n), expected(1, n));
    }
}
