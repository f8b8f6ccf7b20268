//! A Kubernetes upgrade's mechanics end to end without the lab: the one
//! executor drives four "nodes" that are directories on this machine
//! (`LocalHost`, node program under a prefix), with closures shaped like
//! the stdlib's — a `control-plane` phase whose anchor runs the
//! upgrade-only `apply` hook and whose other control plane runs `node`,
//! and a `kubelet` phase wrapped in a drain and an uncordon delegated to
//! the anchor. What a user relies on: upgrade hooks run only when the
//! version changes; the anchor's apply comes first and alone, every
//! control plane before any kubelet, each node drained before its kubelet
//! and uncordoned after, workers in batches; the drains run on the anchor
//! (where the admin credentials are); `--dry-run` shows all of it; a run
//! that does not hold the anchor refuses before touching anything.
//! (Real kubeadm cannot run here: see `tests/cli/upgrade.rs` for the stdlib's
//! hooks.)

use std::path::PathBuf;

use kdeploy::closure::{self, Closures};
use kdeploy::deploy::events::{Collect, Event};
use kdeploy::deploy::switch::{switch_reached, Reached};
use kdeploy::deploy::Report;
use kdeploy::deploy::RunOptions;
use kdeploy::deploy::{Cancel, Outcome, SwitchOptions};
use kdeploy::store::{FileFetcher, Resolver, Store};
use kdeploy::transport::LocalHost;
use serde_json::{json, Value};

const NODES: [&str; 4] = ["cp1", "cp2", "w1", "w2"];
/// Not the first by name, so the order below is the anchor's, not the
/// names'.
const ANCHOR: &str = "cp2";

struct Project {
    dir: tempfile::TempDir,
}

impl Project {
    fn new() -> Project {
        let p = Project { dir: tempfile::tempdir().unwrap() };
        for n in NODES {
            std::fs::create_dir_all(p.prefix(n).join("var/lib")).unwrap();
        }
        p
    }

    fn prefix(&self, node: &str) -> PathBuf {
        self.dir.path().join("nodes").join(node)
    }

    fn log(&self) -> PathBuf {
        self.dir.path().join("upgrade.log")
    }

    fn resolver(&self) -> Resolver {
        let store = Store::new(self.dir.path().join(".kdeploy/store"));
        Resolver::new(self.dir.path(), store, Box::new(FileFetcher))
    }

    /// A hook that logs `<what> <node>` and the host it ran on.
    fn hook(&self, name: &str, when: &str, what: &str, extra: Value) -> Value {
        let run = format!("echo \"{what} on=$KD_HOST\" >> {}", self.log().display());
        let mut h = json!({"name": name, "run": run, "unless": null, "when": when});
        h.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        h
    }

    /// Cluster "up" at Kubernetes `version`; `kubelet_note` changes the
    /// kubelet phase without changing the version.
    fn closures(&self, version: &str, kubelet_note: &str) -> Closures {
        let file = |path: &str, text: String| json!({"group": "root", "mode": "0644", "owner": "root", "path": path, "source": {"text": text}});
        let node = |name: &str| {
            let cp = name.starts_with("cp");
            let upgrade = json!({"upgrade": true});
            let cp_hooks = if name == ANCHOR {
                vec![self.hook("kubeadm-upgrade-apply", "post", &format!("apply {name}"), upgrade.clone())]
            } else {
                vec![self.hook("kubeadm-upgrade-node", "post", &format!("node {name}"), upgrade.clone())]
            };
            let delegated = json!({"upgrade": true, "delegate": ANCHOR});
            let kubelet_hooks = vec![
                self.hook("drain", "pre", &format!("drain {name}"), delegated.clone()),
                self.hook("kubelet-changed", "post", &format!("kubelet {name}"), json!({})),
                self.hook("uncordon", "post", &format!("uncordon {name}"), delegated),
            ];
            let mut phases = vec![json!({
                "activate": true, "checks": [], "name": "kubelet", "units": [], "directories": [],
                "hooks": kubelet_hooks,
                "files": [file("/etc/k/kubelet", format!("{version} {kubelet_note}\n"))],
            })];
            // every node has every phase; a worker's control-plane phase is empty
            let (cp_hooks, cp_files) = if cp {
                (cp_hooks, vec![file("/etc/k/control-plane", format!("{version}\n"))])
            } else {
                (vec![], vec![])
            };
            phases.push(json!({
                "activate": true, "checks": [], "name": "control-plane", "units": [], "directories": [],
                "hooks": cp_hooks, "files": cp_files,
            }));
            json!({
                "address": "127.0.0.1", "roles": [if cp { "control-plane" } else { "worker" }], "settings": {},
                "rollout": if cp { json!({"group": "control-plane", "serial": 1}) }
                           else { json!({"group": "workers", "serial": "50%"}) },
                "ssh": {"jumpHost": null, "key": null, "port": 22, "user": "root"},
                "phases": phases,
            })
        };
        let cluster = json!({
            "name": "up", "anchor": ANCHOR, "schemaVersion": closure::SCHEMA_VERSION, "warnings": [],
            "phaseOrder": ["kubelet", "control-plane"],
            "upgradePhaseOrder": ["control-plane", "kubelet"],
            "kubernetesVersion": version, "anchorCandidates": ["cp1", "cp2"],
            "nodes": NODES.iter().map(|n| (n.to_string(), node(n))).collect::<serde_json::Map<String, Value>>(),
        });
        closure::load(&cluster.to_string(), &self.resolver()).unwrap()
    }

    /// A switch on `nodes`; the plan text for a dry run.
    async fn switch(&self, closures: &Closures, nodes: &[&str], dry_run: bool) -> Result<(Outcome, String), String> {
        let hosts: Vec<LocalHost> = nodes.iter().map(|n| LocalHost::new(n).with_env("KD_HOST", n)).collect();
        let prefixes: Vec<String> = nodes.iter().map(|n| self.prefix(n).display().to_string()).collect();
        let reached: Vec<Reached<'_>> =
            hosts.iter().zip(&prefixes).map(|(h, p)| Reached { host: h, prefix: p }).collect();
        let opts = SwitchOptions {
            run: RunOptions { dry_run, ..RunOptions::at(self.dir.path().join(".kdeploy")) },
            ..Default::default()
        };
        let sink = Collect::default();
        let r = switch_reached(closures, &self.resolver(), &opts, &reached, Cancel::default(), &sink).await;
        let events: Vec<Event> = sink.0.into_inner().unwrap();
        r.map(|Report { outcome: o, plan_text: plan, .. }| {
            assert_eq!(o, Outcome::Ok, "{events:#?}");
            (o, plan)
        })
        .map_err(|e| e.to_string())
    }

    fn take_log(&self) -> Vec<String> {
        let s = std::fs::read_to_string(self.log()).unwrap_or_default();
        let _ = std::fs::remove_file(self.log());
        s.lines().map(str::to_string).collect()
    }
}

fn position(log: &[String], line: &str) -> usize {
    log.iter().position(|l| l == line).unwrap_or_else(|| panic!("{line:?} not in {log:#?}"))
}

#[tokio::test(flavor = "multi_thread")]
async fn an_upgrade_runs_kubeadm_in_order_and_drains_each_node_around_its_kubelet() {
    let p = Project::new();
    p.switch(&p.closures("1.33.1", ""), &NODES, false).await.unwrap();
    // a first switch upgrades nothing: no upgrade hook runs
    let first = p.take_log();
    assert_eq!(first.len(), 4, "{first:#?}");
    assert!(first.iter().all(|l| l.starts_with("kubelet ")), "{first:#?}");

    let up = p.closures("1.33.2", "");
    let (_, plan) = p.switch(&up, &NODES, true).await.unwrap();
    for want in [
        "w1: changed",
        "post hook kubeadm-upgrade-apply",
        "post hook kubeadm-upgrade-node",
        "pre hook drain on cp2",
        "post hook uncordon on cp2",
        "rollout of control-plane: [cp2] then [cp1]",
        "rollout of kubelet: [cp2] then [cp1] then [w1] then [w2]",
    ] {
        assert!(plan.contains(want), "{want:?} not in the plan:\n{plan}");
    }
    assert!(p.take_log().is_empty(), "a dry run ran hooks");

    p.switch(&up, &NODES, false).await.unwrap();
    let log = p.take_log();
    assert_eq!(log.len(), 2 + 4 * 3, "{log:#?}");
    // the anchor's apply first, then the other control plane, then kubelets
    assert_eq!(log[..2], ["apply cp2 on=cp2".to_string(), "node cp1 on=cp1".to_string()], "{log:#?}");
    for n in NODES {
        let (d, k, u) = (format!("drain {n} on=cp2"), format!("kubelet {n} on={n}"), format!("uncordon {n} on=cp2"));
        assert!(position(&log, &d) < position(&log, &k) && position(&log, &k) < position(&log, &u), "{log:#?}");
    }
    // one node at a time: each uncordoned before the next is drained
    let mut spans: Vec<(usize, usize)> = NODES
        .iter()
        .map(|n| (position(&log, &format!("drain {n} on=cp2")), position(&log, &format!("uncordon {n} on=cp2"))))
        .collect();
    spans.sort();
    assert!(spans.windows(2).all(|w| w[0].1 < w[1].0), "{log:#?}");

    // a change that is not an upgrade drains nobody
    p.switch(&p.closures("1.33.2", "tuned"), &NODES, false).await.unwrap();
    let log = p.take_log();
    assert_eq!(log.len(), 4, "{log:#?}");
    assert!(log.iter().all(|l| l.starts_with("kubelet ")), "{log:#?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_upgrade_without_the_anchor_in_the_run_refuses_before_touching_a_node() {
    let p = Project::new();
    p.switch(&p.closures("1.33.1", ""), &NODES, false).await.unwrap();
    p.take_log();
    let before = std::fs::read_to_string(p.prefix("w1").join("etc/k/kubelet")).unwrap();
    let err = p.switch(&p.closures("1.33.2", ""), &["w1"], false).await.unwrap_err();
    assert!(err.contains("w1, phase kubelet: hook drain runs on cp2") && err.contains("--on"), "{err}");
    assert!(p.take_log().is_empty());
    assert_eq!(std::fs::read_to_string(p.prefix("w1").join("etc/k/kubelet")).unwrap(), before);
}
