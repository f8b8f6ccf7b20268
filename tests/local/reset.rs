//! `reset` and `switch --prune` end to end without the lab: the one
//! executor drives "nodes" that are directories on this machine, reached
//! through `LocalHost` with the node program under a prefix (systemd and
//! etcd are the lab's: `tests/lab/reset.rs`). What a user relies on: a reset
//! node holds nothing of kdeploy any more — no managed file, no directory
//! kdeploy made (data inside included), no state — while what was there
//! before is back; reset hooks run last phase first with the phase still
//! in place; the other node is untouched; a node dropped from the
//! definition is named and left alone by `switch`, reset by `--prune`.

use std::path::{Path, PathBuf};

use kdeploy::closure::{self, Closures};
use kdeploy::deploy::consent::Consent;
use kdeploy::deploy::events::{Collect, Event};
use kdeploy::deploy::plan_reset::Scope;
use kdeploy::deploy::record;
use kdeploy::deploy::reset::{reset_reached, Reset, ResetOptions};
use kdeploy::deploy::switch::{switch_reached, Reached};
use kdeploy::deploy::Report;
use kdeploy::deploy::RunOptions;
use kdeploy::deploy::{Cancel, Outcome, SwitchOptions};
use kdeploy::store::{FileFetcher, Resolver, Store};
use kdeploy::transport::LocalHost;
use serde_json::{json, Value};

/// A project directory with one prefix per node.
struct Project {
    dir: tempfile::TempDir,
}

impl Project {
    fn new() -> Project {
        let p = Project { dir: tempfile::tempdir().unwrap() };
        for n in ["n1", "n2"] {
            // an original the `app` phase displaces, to be put back
            let etc = p.prefix(n).join("etc");
            std::fs::create_dir_all(&etc).unwrap();
            // there on every real node, before kdeploy's state directory
            std::fs::create_dir_all(p.prefix(n).join("var/lib")).unwrap();
            std::fs::write(etc.join("motd"), "original motd\n").unwrap();
        }
        p
    }

    fn prefix(&self, node: &str) -> PathBuf {
        self.dir.path().join("nodes").join(node)
    }

    fn at(&self, node: &str, path: &str) -> PathBuf {
        self.prefix(node).join(path.trim_start_matches('/'))
    }

    fn state_dir(&self) -> PathBuf {
        self.dir.path().join(".kdeploy")
    }

    fn log(&self) -> PathBuf {
        self.dir.path().join("reset.log")
    }

    fn resolver(&self) -> Resolver {
        Resolver::new(self.dir.path(), Store::new(self.state_dir().join("store")), Box::new(FileFetcher))
    }

    /// Cluster "local" with `nodes`: phase `base` (a data directory and a
    /// config file below a directory kdeploy makes), then `app` (the
    /// displaced /etc/motd); each phase's reset hook logs the node, the
    /// scope and whether the files of the phases before it are still there.
    fn closures(&self, nodes: &[&str]) -> Closures {
        closure::load(&self.cluster(nodes).to_string(), &self.resolver()).unwrap()
    }

    /// The closures of [`Project::closures`] as JSON.
    fn cluster(&self, nodes: &[&str]) -> Value {
        let node = |name: &str| {
            let file = |path: &str| {
                json!({"group": "root", "mode": "0644", "owner": "root", "path": path,
                       "source": {"text": format!("{path} on {name}\n")}})
            };
            let base_conf = self.at(name, "/etc/demo/base.conf");
            let hook = |phase: &str| {
                json!([{"name": format!("{phase}-reset"), "unless": null, "when": "reset",
                        "run": format!("if test -f {}; then b=present; else b=gone; fi; \
                                        echo \"{name} {phase} $KDEPLOY_RESET base:$b\" >> {}",
                                       base_conf.display(), self.log().display())}])
            };
            json!({
                "address": "127.0.0.1", "roles": [], "settings": {},
                "ssh": {"jumpHost": null, "key": null, "port": 22, "user": "root"},
                "phases": [
                    {"activate": true, "checks": [], "name": "base", "units": [], "hooks": hook("base"),
                     "directories": [{"group": "root", "mode": "0700", "owner": "root", "path": "/var/lib/demo"}],
                     "files": [file("/etc/demo/base.conf")]},
                    {"activate": true, "checks": [], "name": "app", "units": [], "hooks": hook("app"),
                     "directories": [], "files": [file("/etc/motd")]},
                ],
            })
        };
        json!({
            "name": "local", "phaseOrder": ["base", "app"], "schemaVersion": closure::SCHEMA_VERSION,
            "settings": {}, "warnings": [],
            "nodes": nodes.iter().map(|n| (n.to_string(), node(n))).collect::<serde_json::Map<String, Value>>(),
        })
    }

    fn reached<'h>(&self, hosts: &'h [LocalHost], prefixes: &'h [String]) -> Vec<Reached<'h>> {
        hosts.iter().zip(prefixes).map(|(h, p)| Reached { host: h, prefix: p }).collect()
    }

    async fn switch(&self, closures: &Closures, nodes: &[&str], prune: bool) -> (Outcome, Vec<Event>) {
        let hosts: Vec<LocalHost> = nodes.iter().map(|n| LocalHost::new(n)).collect();
        let prefixes: Vec<String> = nodes.iter().map(|n| self.prefix(n).display().to_string()).collect();
        let opts = SwitchOptions { run: RunOptions::at(self.state_dir()), prune, ..Default::default() };
        let sink = Collect::default();
        let reached = self.reached(&hosts, &prefixes);
        let Report { outcome, .. } =
            switch_reached(closures, &self.resolver(), &opts, &reached, Cancel::default(), &sink).await.unwrap();
        (outcome, sink.0.into_inner().unwrap())
    }

    async fn reset(&self, nodes: &[&str], scope: Scope, dry_run: bool) -> (Outcome, String, Vec<Event>) {
        self.reset_beside(nodes, &[], scope, dry_run).await.unwrap()
    }

    /// A reset of `nodes` run with `consent`: the error it was refused with, if any.
    async fn reset_asking(&self, nodes: &[&str], consent: Consent) -> Option<String> {
        self.reset_run(nodes, &[], Scope::Nodes, RunOptions { consent, ..RunOptions::at(self.state_dir()) }).await.err()
    }

    /// A reset of `nodes` that also holds `bystanders` (last), untouched.
    async fn reset_beside(
        &self,
        nodes: &[&str],
        bystanders: &[&str],
        scope: Scope,
        dry_run: bool,
    ) -> Result<(Outcome, String, Vec<Event>), String> {
        self.reset_run(nodes, bystanders, scope, RunOptions { dry_run, ..RunOptions::at(self.state_dir()) }).await
    }

    async fn reset_run(
        &self,
        nodes: &[&str],
        bystanders: &[&str],
        scope: Scope,
        run: RunOptions,
    ) -> Result<(Outcome, String, Vec<Event>), String> {
        let held = || nodes.iter().chain(bystanders);
        let bystanders: Vec<String> = bystanders.iter().map(|n| n.to_string()).collect();
        let nodes: Vec<&str> = held().copied().collect();
        let hosts: Vec<LocalHost> = nodes.iter().map(|n| LocalHost::new(n)).collect();
        let prefixes: Vec<String> = nodes.iter().map(|n| self.prefix(n).display().to_string()).collect();
        let opts = ResetOptions { cluster: "local".into(), run, ..Default::default() };
        let sink = Collect::default();
        let order = ["base".to_string(), "app".to_string()];
        let reached = self.reached(&hosts, &prefixes);
        let Report { outcome, plan_text: plan, .. } = reset_reached(
            &Reset { opts: &opts, order: &order, bystanders, scope, targets: vec![] },
            &reached,
            Cancel::default(),
            &sink,
        )
        .await
        .map_err(|e| e.to_string())?;
        Ok((outcome, plan, sink.0.into_inner().unwrap()))
    }

    fn recorded_nodes(&self) -> Vec<String> {
        record::Records::load(&self.state_dir()).unwrap().latest().map_or(vec![], |g| g.nodes.keys().cloned().collect())
    }

    fn log_lines(&self) -> Vec<String> {
        std::fs::read_to_string(self.log()).unwrap_or_default().lines().map(str::to_string).collect()
    }

    /// Every path below the node's prefix, relative, sorted.
    fn tree(&self, node: &str) -> Vec<String> {
        fn walk(root: &Path, d: &Path, out: &mut Vec<String>) {
            for e in std::fs::read_dir(d).unwrap().flatten() {
                let p = e.path();
                out.push(p.strip_prefix(root).unwrap().display().to_string());
                if p.is_dir() && !p.is_symlink() {
                    walk(root, &p, out);
                }
            }
        }
        let mut out = Vec::new();
        walk(&self.prefix(node), &self.prefix(node), &mut out);
        out.sort();
        out
    }

    fn deployed(&self, node: &str) -> bool {
        let conf = std::fs::read_to_string(self.at(node, "/etc/demo/base.conf")).unwrap_or_default();
        let motd = std::fs::read_to_string(self.at(node, "/etc/motd")).unwrap_or_default();
        conf == format!("/etc/demo/base.conf on {node}\n") && motd == format!("/etc/motd on {node}\n")
    }
}

fn has(events: &[Event], what: impl Fn(&Event) -> bool) -> bool {
    events.iter().any(what)
}

#[tokio::test(flavor = "multi_thread")]
async fn reset_returns_one_node_to_before_its_first_switch_and_a_switch_brings_it_back() {
    let p = Project::new();
    let both = p.closures(&["n1", "n2"]);
    let (outcome, events) = p.switch(&both, &["n1", "n2"], false).await;
    assert_eq!(outcome, Outcome::Ok, "{events:#?}");
    assert!(p.deployed("n1") && p.deployed("n2"));
    // data a service would have written into a directory kdeploy made
    std::fs::write(p.at("n2", "/var/lib/demo/data"), "data").unwrap();
    let before_n1 = p.tree("n1");

    // a dry run says what happens and changes nothing
    let (outcome, plan, _) = p.reset(&["n2"], Scope::Nodes, true).await;
    assert_eq!(outcome, Outcome::Ok);
    assert!(plan.contains("n2: reset"), "{plan}");
    assert!(plan.contains("app : remove") && plan.contains("base : remove") && plan.contains("forget"), "{plan}");
    assert!(p.deployed("n2"));
    assert_eq!(p.recorded_nodes(), ["n1", "n2"]);

    // no one to ask and no --yes, or asked and answered no: refused once
    // the plan is known, naming what it would do; nothing changed
    let absent = p.reset_asking(&["n2"], Consent::Absent).await.unwrap_or_default();
    assert!(absent.contains("--yes") && absent.contains("reset n2"), "{absent}");
    let asked = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let said = asked.clone();
    let no = Consent::Ask(std::sync::Arc::new(move |a: &[String]| {
        said.lock().unwrap().extend_from_slice(a);
        false
    }));
    let refused = p.reset_asking(&["n2"], no).await.unwrap_or_default();
    assert!(refused.starts_with("not confirmed"), "{refused}");
    assert_eq!(asked.lock().unwrap().len(), 1, "{:?}", asked.lock().unwrap());
    assert!(p.deployed("n2"));
    assert_eq!(p.recorded_nodes(), ["n1", "n2"]);
    assert!(p.log_lines().is_empty(), "a reset hook ran: {:?}", p.log_lines());

    let (outcome, _, events) = p.reset(&["n2"], Scope::Nodes, false).await;
    assert_eq!(outcome, Outcome::Ok, "{events:#?}");
    assert!(has(&events, |e| matches!(e, Event::NodeReset { node, .. } if node == "n2")), "{events:#?}");
    // only the original remains: no managed file, no directory kdeploy
    // made (with the data in it), no state directory
    assert_eq!(p.tree("n2"), ["etc", "etc/motd", "var", "var/lib"]);
    assert_eq!(std::fs::read_to_string(p.at("n2", "/etc/motd")).unwrap(), "original motd\n");
    // hooks last phase first, each with the earlier phases still in place
    assert_eq!(p.log_lines(), ["n2 app nodes base:present", "n2 base nodes base:present"]);
    // the other node is as it was; the record no longer lists n2
    assert_eq!(p.tree("n1"), before_n1);
    assert!(p.deployed("n1"));
    assert_eq!(p.recorded_nodes(), ["n1"]);

    // the next switch deploys n2 afresh
    let (outcome, events) = p.switch(&both, &["n1", "n2"], false).await;
    assert_eq!(outcome, Outcome::Ok, "{events:#?}");
    assert!(p.deployed("n2"));
    assert!(has(&events, |e| matches!(e, Event::NodeUnchanged { node } if node == "n1")), "{events:#?}");
    assert_eq!(p.recorded_nodes(), ["n1", "n2"]);

    // resetting the whole cluster tells the hooks so
    let (outcome, _, events) = p.reset(&["n1", "n2"], Scope::Cluster, false).await;
    assert_eq!(outcome, Outcome::Ok, "{events:#?}");
    assert!(p.log_lines().contains(&"n1 app cluster base:present".to_string()), "{:?}", p.log_lines());
    for n in ["n1", "n2"] {
        assert_eq!(p.tree(n), ["etc", "etc/motd", "var", "var/lib"], "{n}");
    }
    assert!(p.recorded_nodes().is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_node_dropped_from_the_definition_is_named_and_left_then_pruned() {
    let p = Project::new();
    let both = p.closures(&["n1", "n2"]);
    assert_eq!(p.switch(&both, &["n1", "n2"], false).await.0, Outcome::Ok);

    // n2 left out: named, untouched, still recorded
    let only_n1 = p.closures(&["n1"]);
    let (outcome, events) = p.switch(&only_n1, &["n1"], false).await;
    assert_eq!(outcome, Outcome::Ok, "{events:#?}");
    assert!(
        has(&events, |e| matches!(e, Event::NodeLeft { node, address } if node == "n2" && address == "127.0.0.1")),
        "{events:#?}"
    );
    assert!(p.deployed("n2"));
    assert_eq!(p.recorded_nodes(), ["n1", "n2"]);
    assert!(p.log_lines().is_empty());

    // --prune resets it and drops it from the record; n1 is unchanged
    let (outcome, events) = p.switch(&only_n1, &["n1", "n2"], true).await;
    assert_eq!(outcome, Outcome::Ok, "{events:#?}");
    assert!(has(&events, |e| matches!(e, Event::NodeReset { node, .. } if node == "n2")), "{events:#?}");
    assert!(has(&events, |e| matches!(e, Event::NodeUnchanged { node } if node == "n1")), "{events:#?}");
    assert!(!has(&events, |e| matches!(e, Event::NodeLeft { .. })), "{events:#?}");
    assert_eq!(p.tree("n2"), ["etc", "etc/motd", "var", "var/lib"]);
    // the hooks know it is a prune (others remain; etcd membership is the engine's)
    assert_eq!(p.log_lines(), ["n2 app pruned base:present", "n2 base pruned base:present"]);
    assert!(p.deployed("n1"));
    assert_eq!(p.recorded_nodes(), ["n1"]);

    // nothing left to name; putting n2 back deploys it again
    let (_, events) = p.switch(&only_n1, &["n1"], false).await;
    assert!(!has(&events, |e| matches!(e, Event::NodeLeft { .. })), "{events:#?}");
    assert_eq!(p.switch(&both, &["n1", "n2"], false).await.0, Outcome::Ok);
    assert!(p.deployed("n2"));
    assert_eq!(p.recorded_nodes(), ["n1", "n2"]);
}

/// A worker's drain runs on the anchor, where the admin credentials are: a
/// reset hook delegated to another node runs there, in a prune and in a
/// reset of some nodes (which holds the delegate, untouched, beside them).
#[tokio::test(flavor = "multi_thread")]
async fn a_reset_hook_delegated_to_another_node_runs_there_in_a_prune_and_a_partial_reset() {
    let p = Project::new();
    let mut cluster = p.cluster(&["n1", "n2"]);
    let drain = json!({"name": "drain", "unless": null, "when": "reset", "delegate": "n1",
                       "run": format!("echo \"drain n2 from $KDEPLOY_PREFIX $KDEPLOY_RESET\" >> {}", p.log().display())});
    cluster["nodes"]["n2"]["phases"][1]["hooks"].as_array_mut().unwrap().push(drain);
    let both = closure::load(&cluster.to_string(), &p.resolver()).unwrap();
    let drained = |scope: &str| format!("drain n2 from {} {scope}", p.prefix("n1").display());

    // reset --on n2: n1 held beside it, the hook run there, n1 untouched
    assert_eq!(p.switch(&both, &["n1", "n2"], false).await.0, Outcome::Ok);
    let before_n1 = p.tree("n1");
    let (outcome, _, events) = p.reset_beside(&["n2"], &["n1"], Scope::Nodes, false).await.unwrap();
    assert_eq!(outcome, Outcome::Ok, "{events:#?}");
    // (in the order of the phase's hooks: the drain is listed after app-reset)
    assert_eq!(
        p.log_lines(),
        ["n2 app nodes base:present".into(), drained("nodes"), "n2 base nodes base:present".into()]
    );
    // (but for the stat its drift check keeps when it finds nothing: verify.*)
    let kept = |tree: Vec<String>| -> Vec<String> {
        tree.into_iter().filter(|p| !p.starts_with("var/lib/kdeploy/verify.")).collect()
    };
    assert_eq!(kept(p.tree("n1")), kept(before_n1));
    assert_eq!(p.tree("n2"), ["etc", "etc/motd", "var", "var/lib"]);
    assert_eq!(p.recorded_nodes(), ["n1"], "the bystander stays in the record, the reset node leaves it");

    // without the delegate held, the reset refuses before it changes anything
    assert_eq!(p.switch(&both, &["n1", "n2"], false).await.0, Outcome::Ok);
    std::fs::remove_file(p.log()).unwrap();
    let refused = p.reset_beside(&["n2"], &[], Scope::Nodes, false).await.err().unwrap_or_default();
    assert!(refused.contains("n1"), "{refused}");
    assert!(p.deployed("n2") && p.log_lines().is_empty());

    // switch --prune: the anchor is in the switch
    let only_n1 = p.closures(&["n1"]);
    let (outcome, events) = p.switch(&only_n1, &["n1", "n2"], true).await;
    assert_eq!(outcome, Outcome::Ok, "{events:#?}");
    assert!(p.log_lines().contains(&drained("pruned")), "{:?}", p.log_lines());
    assert_eq!(p.tree("n2"), ["etc", "etc/motd", "var", "var/lib"]);
}
