//! The snapshot a switch takes before it changes a membership's phase,
//! through the real executor without the lab: two "nodes" that are
//! directories reached through `LocalHost`, and a membership whose
//! `snapshot` command prints the node's "member data" (real etcd
//! snapshots and restores are in `tests/lab/restore.rs`). What a user
//! relies on: a first switch takes none (nothing to lose); a switch that
//! changes the phase keeps one, 0600 in a 0700 directory, its bytes what
//! the member printed, the `keep` newest only; one that changes nothing
//! takes none; when no member gives one, the switch stops before it
//! changes anything (exit 6's stage), and `--no-snapshot` goes on.

use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};

use kdeploy::closure::{self, Closures};
use kdeploy::deploy::error::{Error, SnapshotError, Stage};
use kdeploy::deploy::events::Collect;
use kdeploy::deploy::switch::{switch_reached, Reached};
use kdeploy::deploy::RunOptions;
use kdeploy::deploy::{Cancel, Outcome, SwitchOptions};
use kdeploy::store::{FileFetcher, Resolver, Store};
use kdeploy::transport::LocalHost;
use serde_json::json;

const NODES: [&str; 2] = ["n1", "n2"];

struct Project {
    dir: tempfile::TempDir,
}

impl Project {
    fn new() -> Project {
        let p = Project { dir: tempfile::tempdir().unwrap() };
        for n in NODES {
            std::fs::create_dir_all(p.node_dir(n)).unwrap();
            std::fs::write(p.node_dir(n).join("db"), format!("{n}'s data\n")).unwrap();
        }
        p
    }

    fn node_dir(&self, node: &str) -> PathBuf {
        self.dir.path().join(node)
    }

    fn resolver(&self) -> Resolver {
        Resolver::new(self.dir.path(), Store::new(self.dir.path().join(".kdeploy/store")), Box::new(FileFetcher))
    }

    fn snapshots(&self) -> Vec<PathBuf> {
        let dir = self.dir.path().join(".kdeploy/snapshots/etcd");
        let mut all: Vec<PathBuf> = std::fs::read_dir(dir).map_or(vec![], |d| d.flatten().map(|e| e.path()).collect());
        all.sort();
        all
    }

    /// What phase `etcd` of each node holds (a file naming `version`).
    fn deployed(&self, node: &str) -> String {
        std::fs::read_to_string(self.node_dir(node).join("root/etc/demo/etcd.env")).unwrap_or_default()
    }

    /// Both nodes members; phase `etcd` has a file naming `version`; the
    /// snapshot command prints the node's data (or runs `snapshot`).
    fn closures(&self, version: u32, snapshot: &str) -> Closures {
        let node = |name: &str| {
            json!({
                "address": format!("10.0.0.{}", &name[1..]), "roles": [], "settings": {},
                "ssh": {"jumpHost": null, "key": null, "port": 22, "user": "root"},
                "phases": [{"activate": true, "checks": [], "directories": [], "hooks": [], "name": "etcd",
                            "units": [],
                            "files": [{"group": "root", "mode": "0644", "owner": "root", "path": "/etc/demo/etcd.env",
                                       "source": {"text": format!("version {version}\n")}}]}],
            })
        };
        let member =
            |name: &str| json!({"name": name, "peer": format!("http://10.0.0.{}:2380", &name[1..]), "wipe": "true"});
        let cluster = json!({
            "name": "local", "phaseOrder": ["etcd"], "schemaVersion": closure::SCHEMA_VERSION,
            "settings": {}, "warnings": [],
            "nodes": {"n1": node("n1"), "n2": node("n2")},
            "memberships": {"etcd": {
                "phase": "etcd",
                "members": {"n1": member("n1"), "n2": member("n2")},
                // no member answers: no membership change is planned
                "list": "false", "add": "false", "promote": "false", "remove": "false", "handoff": "true", "join": "true",
                "snapshot": snapshot, "snapshotBefore": ["etcd"], "keep": 2,
            }},
        });
        closure::load(&cluster.to_string(), &self.resolver()).unwrap()
    }

    async fn switch(&self, closures: &Closures, no_snapshot: bool) -> Result<Outcome, Error> {
        let hosts: Vec<LocalHost> =
            NODES.iter().map(|n| LocalHost::new(n).with_env("NODE_DIR", self.node_dir(n).to_str().unwrap())).collect();
        let prefixes: Vec<String> = NODES.iter().map(|n| self.node_dir(n).join("root").display().to_string()).collect();
        let reached: Vec<Reached<'_>> =
            hosts.iter().zip(&prefixes).map(|(h, p)| Reached { host: h, prefix: p }).collect();
        let opts =
            SwitchOptions { run: RunOptions::at(self.dir.path().join(".kdeploy")), no_snapshot, ..Default::default() };
        let sink = Collect::default();
        switch_reached(closures, &self.resolver(), &opts, &reached, Cancel::default(), &sink).await.map(|r| r.outcome)
    }
}

fn mode(p: &Path) -> u32 {
    std::fs::metadata(p).unwrap().permissions().mode() & 0o777
}

const SAVE: &str = "cat \"$NODE_DIR/db\"";

#[tokio::test(flavor = "multi_thread")]
async fn a_switch_keeps_a_snapshot_before_changing_the_phase_and_only_then() {
    let p = Project::new();
    assert_eq!(p.switch(&p.closures(1, SAVE), false).await.unwrap(), Outcome::Ok);
    assert!(p.snapshots().is_empty(), "a first switch took one: {:?}", p.snapshots());

    assert_eq!(p.switch(&p.closures(2, SAVE), false).await.unwrap(), Outcome::Ok);
    let taken = p.snapshots();
    assert_eq!(taken.len(), 1, "{taken:?}");
    assert_eq!(std::fs::read_to_string(&taken[0]).unwrap(), "n1's data\n", "the first member's bytes");
    assert_eq!(mode(&taken[0]), 0o600);
    assert_eq!(mode(taken[0].parent().unwrap()), 0o700);
    assert!(taken[0].file_name().unwrap().to_str().unwrap().ends_with("-n1.db"), "{taken:?}");

    assert_eq!(p.switch(&p.closures(2, SAVE), false).await.unwrap(), Outcome::Ok);
    assert_eq!(p.snapshots().len(), 1, "a switch that changes nothing took one");

    for v in 3..=5 {
        assert_eq!(p.switch(&p.closures(v, SAVE), false).await.unwrap(), Outcome::Ok);
    }
    let kept = p.snapshots();
    assert_eq!(kept.len(), 2, "keep = 2: {kept:?}");
    assert!(!kept.contains(&taken[0]), "the oldest went: {kept:?}");
    assert_eq!(p.deployed("n1"), "version 5\n");
}

#[tokio::test(flavor = "multi_thread")]
async fn no_member_giving_a_snapshot_stops_the_switch_before_any_change_unless_told_to_go_on() {
    let p = Project::new();
    let broken = "echo 'etcd: connection refused' >&2; exit 1";
    assert_eq!(p.switch(&p.closures(1, broken), false).await.unwrap(), Outcome::Ok, "a first switch needs none");

    let e = p.switch(&p.closures(2, broken), false).await.expect_err("refused");
    assert_eq!(e.stage(), Stage::Planning, "{e}");
    assert!(matches!(e, Error::Snapshot(SnapshotError::NoneTaken { .. })), "{e:?}");
    let said = e.to_string();
    assert!(said.contains("n1:") && said.contains("n2:") && said.contains("connection refused"), "{said}");
    assert!(said.contains("--no-snapshot"), "{said}");
    for n in NODES {
        assert_eq!(p.deployed(n), "version 1\n", "{n} changed");
    }
    assert!(p.snapshots().is_empty(), "{:?}", p.snapshots());
    // nothing half-written stays either
    let dir = p.dir.path().join(".kdeploy/snapshots/etcd");
    assert_eq!(std::fs::read_dir(&dir).map_or(0, |d| d.count()), 0, "leftovers in {}", dir.display());

    assert_eq!(p.switch(&p.closures(2, broken), true).await.unwrap(), Outcome::Ok, "--no-snapshot");
    assert_eq!(p.deployed("n1"), "version 2\n");

    // a snapshot command that prints nothing is no snapshot
    let e = p.switch(&p.closures(3, "true"), false).await.expect_err("empty");
    assert!(e.to_string().contains("printed nothing"), "{e}");
}
