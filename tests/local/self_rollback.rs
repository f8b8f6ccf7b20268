//! Self-rollback (deploy-rs's "magic rollback") through the real executor
//! and the real node program, without the lab: two "nodes" that are
//! directories reached through `LocalHost`, one of which refuses new
//! connections while a file of the change exists — as a node whose sshd a
//! change broke does (the lab test breaks a real sshd: `tests/lab/self_rollback.rs`).
//! What a user relies on: a change that leaves the node reachable is
//! confirmed and stays; one that cuts it off is moved back by the node
//! itself (every phase the run switched there, not only the one that cut
//! it off), the run waits for that and says so, the other node is put
//! back by the deployer, and the next run is told too and converges.

use std::path::PathBuf;

use kdeploy::closure::{self, Closures};
use kdeploy::deploy::events::{Collect, Event};
use kdeploy::deploy::switch::{switch_reached, Reached};
use kdeploy::deploy::RunOptions;
use kdeploy::deploy::{Cancel, Outcome, SwitchOptions};
use kdeploy::store::{FileFetcher, Resolver, Store};
use kdeploy::transport::LocalHost;
use serde_json::json;

const NODES: [&str; 2] = ["n1", "n2"];
/// The deadline the phase `access` is armed with, seconds: long enough
/// that a confirmation made beside a full build still comes in time (2 s
/// did not, now and then, with the whole suite running beside builds).
const DEADLINE: u32 = 5;

struct Project {
    dir: tempfile::TempDir,
}

impl Project {
    fn new() -> Project {
        Project { dir: tempfile::tempdir().unwrap() }
    }

    fn root(&self, node: &str) -> PathBuf {
        self.dir.path().join(node).join("root")
    }

    fn resolver(&self) -> Resolver {
        Resolver::new(self.dir.path(), Store::new(self.dir.path().join(".kdeploy/store")), Box::new(FileFetcher))
    }

    fn read(&self, node: &str, path: &str) -> Option<String> {
        std::fs::read_to_string(self.root(node).join(path.trim_start_matches('/'))).ok()
    }

    /// Phase `base` (not armed) holds /etc/demo/base naming `version`,
    /// phase `access` (armed) /etc/demo/access; with `lock_out`, n1's
    /// `access` also holds /etc/demo/gate, which cuts n1 off.
    fn closures(&self, version: u32, lock_out: bool) -> Closures {
        let file = |path: &str, text: String| json!({"group": "root", "mode": "0644", "owner": "root", "path": path, "source": {"text": text}});
        let phase = |name: &str, guard: Option<u32>, files: Vec<serde_json::Value>| {
            json!({"activate": true, "checks": [], "directories": [], "hooks": [], "name": name, "units": [],
                   "selfRollback": guard, "files": files})
        };
        let node = |name: &str| {
            let mut access = vec![file("/etc/demo/access", format!("version {version}\n"))];
            if lock_out && name == "n1" {
                access.push(file("/etc/demo/gate", "no new connections\n".into()));
            }
            json!({
                "address": format!("10.0.0.{}", &name[1..]), "roles": [], "settings": {},
                "ssh": {"jumpHost": null, "key": null, "port": 22, "user": "root"},
                "phases": [
                    phase("base", None, vec![file("/etc/demo/base", format!("version {version}\n"))]),
                    phase("access", Some(DEADLINE), access),
                ],
            })
        };
        let cluster = json!({
            "name": "local", "phaseOrder": ["base", "access"], "schemaVersion": closure::SCHEMA_VERSION,
            "settings": {}, "warnings": [],
            "nodes": {"n1": node("n1"), "n2": node("n2")},
        });
        closure::load(&cluster.to_string(), &self.resolver()).unwrap()
    }

    async fn switch(&self, closures: &Closures) -> (Outcome, Vec<Event>) {
        let hosts: Vec<LocalHost> = NODES
            .iter()
            .map(|n| LocalHost::new(n).refusing_new_connections_while(&self.root(n).join("etc/demo/gate")))
            .collect();
        let prefixes: Vec<String> = NODES.iter().map(|n| self.root(n).display().to_string()).collect();
        let reached: Vec<Reached<'_>> =
            hosts.iter().zip(&prefixes).map(|(h, p)| Reached { host: h, prefix: p }).collect();
        let opts = SwitchOptions { run: RunOptions::at(self.dir.path().join(".kdeploy")), ..Default::default() };
        let sink = Collect::default();
        let r = switch_reached(closures, &self.resolver(), &opts, &reached, Cancel::default(), &sink).await;
        let events = sink.0.into_inner().unwrap();
        (r.expect("the switch runs").outcome, events)
    }
}

fn confirmed(events: &[Event]) -> Vec<String> {
    let mut v: Vec<String> = events
        .iter()
        .filter_map(|e| match e {
            Event::Confirmed { node, phase } => Some(format!("{node}/{phase}")),
            _ => None,
        })
        .collect();
    v.sort();
    v
}

fn by_itself(events: &[Event]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::SelfRolledBack { node, rollback } => {
                Some(format!("{node}/{}->{:?}/{:?}", rollback.phase, rollback.generation, rollback.failed))
            }
            _ => None,
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_change_that_cuts_a_node_off_is_moved_back_by_the_node_itself() {
    let p = Project::new();
    let (outcome, events) = p.switch(&p.closures(1, false)).await;
    assert_eq!(outcome, Outcome::Ok, "{events:#?}");
    assert_eq!(confirmed(&events), ["n1/access", "n2/access"], "only the armed phase is confirmed");

    // no watchdog fires on a confirmed change, even past its deadline
    tokio::time::sleep(std::time::Duration::from_secs(u64::from(DEADLINE) + 2)).await;
    assert_eq!(p.read("n1", "/etc/demo/access").as_deref(), Some("version 1\n"));
    assert!(!p.root("n1").join("var/lib/kdeploy/armed").exists(), "still armed after the confirmation");

    // version 2 cuts n1 off (its gate): n1 moves both phases back by
    // itself, n2 is put back by the deployer
    let (outcome, events) = p.switch(&p.closures(2, true)).await;
    assert_eq!(outcome, Outcome::Failed, "{events:#?}");
    assert_eq!(by_itself(&events), ["n1/access->Some(1)/[]", "n1/base->Some(1)/[]"], "{events:#?}");
    let failed = events.iter().find_map(|e| match e {
        Event::Failed { node, message, .. } if node == "n1" => Some(message.clone()),
        _ => None,
    });
    assert!(failed.is_some_and(|m| m.contains("took no new connection")), "{events:#?}");
    for n in NODES {
        assert_eq!(p.read(n, "/etc/demo/base").as_deref(), Some("version 1\n"), "{n}");
        assert_eq!(p.read(n, "/etc/demo/access").as_deref(), Some("version 1\n"), "{n}");
    }
    assert_eq!(p.read("n1", "/etc/demo/gate"), None, "the gate is gone with the change");
    let undone_by_deployer: Vec<&Event> =
        events.iter().filter(|e| matches!(e, Event::RolledBack { node, .. } if node == "n1")).collect();
    assert!(undone_by_deployer.is_empty(), "the deployer reached back into a cut-off node: {undone_by_deployer:?}");

    // the next run is told, converges, and the record is cleared
    let (outcome, events) = p.switch(&p.closures(3, false)).await;
    assert_eq!(outcome, Outcome::Ok, "{events:#?}");
    assert_eq!(by_itself(&events).len(), 2, "the next run says what the node did: {events:#?}");
    for n in NODES {
        assert_eq!(p.read(n, "/etc/demo/access").as_deref(), Some("version 3\n"), "{n}");
    }
    let (outcome, events) = p.switch(&p.closures(3, false)).await;
    assert_eq!(outcome, Outcome::Ok);
    assert!(by_itself(&events).is_empty(), "told twice: {events:#?}");
}
