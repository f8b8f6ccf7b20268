//! Real Kubernetes under kdeploy, on lab nodes kdnode4-8 (10.77.0.14-18), or the
//! same again on kdnode17-21 when the other test holds those (`lane.rs`), of a
//! Kubernetes-capable lab (`lab/lab.sh up 21 --k8s`, lab/build-k8s.sh built,
//! lab/images.sh pushed): clusters/lab.nix moved to those addresses, converged
//! from freshly booted nodes and checked the way a user checks a cluster —
//! every node Ready, /readyz, CoreDNS answering a pod, a Deployment of two
//! replicas reached through its ClusterIP Service from a pod on the third
//! node. One converged cluster lives through the seed's two traps (a run
//! killed after `kubeadm init` and before the CNI, finished by the next run;
//! every run from an empty environment), the no-op re-run, a rollback, a join
//! against another CA, a worker added and pruned, an upgrade, and a reset back
//! to the booted nodes: converging afresh for each costs minutes and proves
//! nothing more. Three control planes need other nodes and have a test of
//! their own.

use crate::support;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Instant;

use support::node::lab_project::differs_from_boot;
use support::node::link::{wait_for_sshd, LinkDown};
use support::node::service_prober::{run_timed, Prober};
use support::node::{lab_dir, lab_has, lab_lock_k8s, lane, repo};

/// The nodes this file uses (kdnode1-5 belong to the other lab tests).
const NODES: [u32; 3] = [6, 7, 8];
const BIN: &str = "/var/cache/kdeploy-lab/bin";
const KUBECTL: &str = "KUBECONFIG=/etc/kubernetes/admin.conf kubectl";

/// Is the lab able to run this? Under CI anything missing is a failure.
fn k8s_lab() -> bool {
    if !lab_has(8) {
        return false;
    }
    let env = std::fs::read_to_string(lab_dir().join("lab.env")).unwrap_or_default();
    let ready = env.lines().any(|l| l == "K8S=1") && Path::new(BIN).join("kubernetes-1.34.4/done").exists();
    if !ready {
        let why = "needs a Kubernetes-capable lab and the built binaries: lab/build-k8s.sh; lab/lab.sh up 21 --k8s";
        assert!(std::env::var_os("CI").is_none(), "{why} (CI is set)");
        eprintln!("SKIPPED: {why}");
        return false;
    }
    let push = Command::new(repo().join("lab/images.sh")).args(["push", "10.77.0.1:5000"]).output().unwrap();
    assert!(push.status.success(), "lab/images.sh push: {}", String::from_utf8_lossy(&push.stderr));
    true
}

/// A project holding clusters/lab.nix moved to kdnode6-8.
fn project() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let file = variant(dir.path(), "lab.nix", "");
    (dir, file)
}

/// `name` in the project `dir`: clusters/lab.nix moved to kdnode6-8, with `extra` settings.
fn variant(dir: &Path, name: &str, extra: &str) -> PathBuf {
    let mut lab = std::fs::read_to_string(repo().join("clusters/lab.nix")).unwrap();
    for (from, to) in [(".11\"", ".16\""), (".12\"", ".17\""), (".13\"", ".18\"")] {
        assert!(lab.contains(from), "clusters/lab.nix has no {from}");
        lab = lab.replace(from, to);
    }
    let lab = lane::text(&lab).replacen("settings = {", &format!("settings = {{\n{extra}"), 1);
    let file = dir.join(name);
    std::fs::write(&file, lab).unwrap();
    file
}

/// `kdeploy SUB FILE ...` with the lab's key and host keys, from an empty environment
/// (as from a systemd unit or CI: no HOME, no KUBECONFIG), PATH aside.
fn kdeploy(sub: &str, file: &Path, extra: &[&str]) -> Command {
    let lab = lab_dir();
    let mut c = Command::new(env!("CARGO_BIN_EXE_kdeploy"));
    c.env_clear()
        .env("PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin")
        .arg(sub)
        .arg(file)
        .args(["--ssh-key", lab.join("id_ed25519").to_str().unwrap()])
        .args(["--known-hosts", lab.join("known_hosts").to_str().unwrap()])
        .args(["--output", "json"])
        .args(extra);
    // no terminal here: consent to drains, prunes and resets up front
    if support::node::lab_project::needs_yes(sub, extra) {
        c.arg("--yes");
    }
    // the lab's binaries are files of this machine (the flag for switch, the
    // environment for the commands that only evaluate)
    if sub == "switch" {
        c.args(["--allow-local", BIN]);
    } else {
        c.env("KDEPLOY_ALLOW_LOCAL", BIN);
    }
    c
}

fn run(mut c: Command) -> (Output, serde_json::Value) {
    let out = c.output().unwrap();
    let json = serde_json::from_slice(&out.stdout).unwrap_or(serde_json::Value::Null);
    (out, json)
}

fn text(o: &Output) -> String {
    format!(
        "status {:?}\nstdout:\n{}\nstderr (tail):\n{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
            .lines()
            .rev()
            .take(60)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect::<Vec<_>>()
            .join("\n")
    )
}

/// `sh -c CMD` inside lab node `i` (no SSH): (success, stdout + stderr).
fn on(i: u32, cmd: &str) -> (bool, String) {
    let i = lane::node(i).to_string();
    let out = Command::new(repo().join("lab/lab.sh")).args(["exec", &i, cmd]).output().unwrap();
    (out.status.success(), String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr))
}

/// kubectl on the control plane (kdnode6), with admin credentials.
fn kubectl(args: &str) -> (bool, String) {
    on(NODES[0], &format!("{KUBECTL} {args}"))
}

fn fresh_nodes() {
    reboot(&NODES);
}

fn statuses(j: &serde_json::Value) -> Vec<String> {
    support::node::lab_project::statuses(j).into_iter().map(|(_, s)| s).collect()
}

/// What a user checks after a converge of the three-node cluster.
fn assert_cluster_works() {
    assert_cluster_of_works(3);
}

/// What a user checks after a converge: `nodes` nodes Ready, API, DNS, a Service
/// across nodes.
fn assert_cluster_of_works(nodes: usize) {
    let (ok, out) = kubectl("wait --for=condition=Ready node --all --timeout=300s");
    assert!(ok, "nodes not Ready: {out}\n{}", kubectl("get nodes -o wide").1);
    let (_, listed) = kubectl("get nodes --no-headers");
    assert_eq!(listed.lines().filter(|l| l.split_whitespace().nth(1) == Some("Ready")).count(), nodes, "{listed}");
    assert_eq!(kubectl("get --raw /readyz").1.trim(), "ok");

    let manifest = std::fs::read_to_string(repo().join("lab/echo.yaml")).unwrap();
    let apply = Command::new(repo().join("lab/lab.sh"))
        .args(["exec", &lane::node(6).to_string(), &format!("{KUBECTL} apply -f - <<'EOF'\n{manifest}\nEOF")])
        .output()
        .unwrap();
    assert!(apply.status.success(), "{}", String::from_utf8_lossy(&apply.stderr));
    let (ok, out) = kubectl("rollout status deployment/kd-echo --timeout=300s");
    assert!(ok, "kd-echo did not roll out: {out}\n{}", kubectl("get pods -A -o wide").1);
    let (ok, out) = kubectl("wait --for=condition=Ready pod/kd-client --timeout=300s");
    assert!(ok, "kd-client not Ready: {out}");

    // the two replicas on two nodes, the client on the third (a replica scaled away
    // before is gone within its grace period)
    let pods = || {
        kubectl("get pods --no-headers -o custom-columns=POD:.metadata.name,NODE:.spec.nodeName,GONE:.metadata.deletionTimestamp").1
    };
    let mut wide = pods();
    for _ in 0..15 {
        if !wide.lines().any(|l| l.split_whitespace().nth(2) != Some("<none>")) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_secs(2));
        wide = pods();
    }
    let node_of = |prefix: &str| -> Vec<String> {
        wide.lines()
            .filter(|l| l.starts_with(prefix))
            .filter_map(|l| l.split_whitespace().nth(1).map(String::from))
            .collect()
    };
    let (replicas, client) = (node_of("kd-echo-"), node_of("kd-client"));
    assert_eq!(replicas.len(), 2, "{wide}");
    assert_ne!(replicas[0], replicas[1], "replicas on one node: {wide}");
    assert!(!replicas.contains(&client[0]), "the client shares a node with a replica: {wide}");

    // both replicas answer through the Service, from the third node (a kube-proxy
    // that has not synced the second endpoint yet is given a few rounds)
    let mut pods = std::collections::BTreeSet::new();
    for _ in 0..10 {
        let (ok, answers) = kubectl(
            "--request-timeout=120s exec kd-client -- sh -c 'for i in 1 2 3 4 5 6 7 8; do wget -qO- http://kd-echo/; done'",
        );
        assert!(ok, "calls through the Service failed: {answers}");
        pods.extend(answers.lines().filter_map(|l| l.strip_prefix("kd-echo ")?.split(' ').next().map(String::from)));
        if pods.len() == 2 {
            break;
        }
        std::thread::sleep(std::time::Duration::from_secs(2));
    }
    assert_eq!(pods.len(), 2, "not both replicas answered in 80 calls: {pods:?}");

    // CoreDNS, from a pod
    let (ok, dns) = kubectl("exec kd-client -- nslookup kd-echo.default.svc.cluster.local");
    assert!(ok, "CoreDNS did not answer: {dns}");
    let (_, svc) = kubectl("get service kd-echo -o jsonpath={.spec.clusterIP}");
    assert!(dns.contains(svc.trim()), "DNS gave no {svc}: {dns}");
}

/// The lab cluster in the project `dir` with other `nodes` (name, lab node, roles),
/// and `extra` settings.
fn with_nodes(dir: &Path, name: &str, nodes: &[(&str, u32, &str)], extra: &str) -> PathBuf {
    let file = variant(dir, name, extra);
    let lab = std::fs::read_to_string(&file).unwrap();
    let at = lab.find("nodes = {").unwrap();
    let end = at + lab[at..].find("\n  };").unwrap() + 5;
    let listed: String = nodes
        .iter()
        .map(|(n, i, roles)| {
            let roles: Vec<String> = roles.split(' ').map(|r| format!("\"{r}\"")).collect();
            format!("    {n} = {{ address = \"{}\"; roles = [ {} ]; }};\n", lane::address(*i), roles.join(" "))
        })
        .collect();
    std::fs::write(&file, format!("{}nodes = {{\n{listed}  }};{}", &lab[..at], &lab[end..])).unwrap();
    file
}

/// The replicas of kd-echo: (pod, node) of each running one.
fn echo_replicas() -> Vec<(String, String)> {
    let (_, out) = kubectl("get pods -l app=kd-echo --field-selector=status.phase=Running --no-headers -o wide");
    out.lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            Some((f.first()?.to_string(), f.get(6)?.to_string()))
        })
        .collect()
}

/// The node as the lab booted it: nothing of Kubernetes, etcd, containerd or kdeploy
/// running or left (named first, in words), and its files and units as at boot.
fn assert_as_booted(i: u32) {
    let (_, out) = on(
        i,
        "systemctl is-active kubelet containerd etcd 2>/dev/null; ls /etc/kubernetes /var/lib/kdeploy /etc/etcd.env 2>&1; \
         pgrep -l 'kube|etcd|containerd|flannel|coredns' || echo no-processes; \
         ip -o link show cni0 2>/dev/null || echo no-cni0",
    );
    assert!(out.contains("no-cni0"), "the CNI bridge is left on kdnode{i}: {out}");
    assert!(!out.lines().any(|l| l == "active"), "a unit still runs on kdnode{i}: {out}");
    assert!(out.contains("no-processes"), "processes left on kdnode{i}: {out}");
    assert_eq!(out.matches("No such file or directory").count(), 3, "files left on kdnode{i}: {out}");
    // file by file and unit by unit, against what lab.sh recorded when it booted the node
    let differs = differs_from_boot(i);
    assert!(differs.is_empty(), "kdnode{i} after reset differs from its boot state:\n{}", differs.join("\n"));
}

/// The lab cluster through its life, on one converge as a user's cluster lives
/// (each step below says what it shows): a first run killed after `kubeadm init`
/// finished by the next plain switch, the no-op re-run, a setting changed and rolled
/// back, a join against another CA refused, a worker added and pruned and an upgrade
/// by one minor version while a client calls the Service, then a reset back to the
/// nodes as the lab booted them. Every run comes from an empty environment.
#[test]
fn the_lab_cluster_from_a_killed_first_run_through_day_two_to_reset() {
    if !k8s_lab() {
        return;
    }
    let _lab = lab_lock_k8s();
    fresh_nodes();
    reboot(&[5]);
    let (dir, file) = project();
    a_run_killed_after_kubeadm_init_is_finished_by_the_next_switch(&file);
    the_re_run_is_a_no_op(&file);
    a_kubelet_setting_changed_then_rolled_back(dir.path(), &file);
    a_join_to_an_api_server_with_another_ca_is_refused(dir.path(), &file);
    a_worker_added_then_pruned_while_the_service_answers(dir.path());
    let last = an_upgrade_by_one_minor_version_while_the_service_answers(dir.path()).unwrap_or(file);

    // Reset: every node as the lab booted it.
    reset_all(&last);
    for i in NODES {
        assert_as_booted(i);
    }
}

/// The seed's trap: a first run killed once the control-plane phase is done everywhere
/// (kubeadm init ran, the workers joined, no CNI yet: Kubespray's re-run waits there for
/// Ready nodes) is finished by the next plain switch, and the cluster works.
fn a_run_killed_after_kubeadm_init_is_finished_by_the_next_switch(file: &Path) {
    let mut killed = kdeploy("switch", file, &[]);
    killed.env("KDEPLOY_FAILPOINT", "after-phase:control-plane");
    let (out, _) = run(killed);
    assert!(!out.status.success(), "the failpoint did not fire:\n{}", text(&out));
    assert!(on(6, "test -f /etc/kubernetes/admin.conf").0, "kubeadm init had not run");
    assert!(!on(6, "ls /etc/cni/net.d/10-flannel.conflist").0, "the CNI was already there");
    let (_, nodes) = kubectl("get nodes --no-headers");
    assert!(nodes.contains("NotReady"), "nodes Ready without a CNI: {nodes}");

    let (out, j) = run(kdeploy("switch", file, &[]));
    assert!(out.status.success(), "the next switch did not finish:\n{}", text(&out));
    assert_eq!(statuses(&j), ["changed"; 3], "{}", text(&out));
    assert_cluster_works();
}

fn the_re_run_is_a_no_op(file: &Path) {
    let (out, j) = run(kdeploy("switch", file, &[]));
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(statuses(&j), ["unchanged"; 3], "the re-run was not a no-op:\n{}", text(&out));
}

/// A kubelet setting changed, then rolled back: the kubelet runs the old one again.
fn a_kubelet_setting_changed_then_rolled_back(dir: &Path, file: &Path) {
    let changed = variant(dir, "changed.nix", "    kubelet.maxPods = 64;\n");
    let (out, _) = run(kdeploy("switch", &changed, &[]));
    assert!(out.status.success(), "{}", text(&out));
    assert!(on(7, "grep -q '^maxPods: 64' /etc/kubernetes/kubelet-config.yaml").0);
    let (out, _) = run(kdeploy("rollback", file, &[]));
    assert!(out.status.success(), "rollback failed:\n{}", text(&out));
    assert!(on(7, "grep -q '^maxPods: 110' /etc/kubernetes/kubelet-config.yaml").0);
    let (ok, pods) = kubectl("get node k8s-worker01 -o jsonpath={.status.capacity.pods}");
    assert!(ok);
    let back = (0..30).any(|_| {
        std::thread::sleep(std::time::Duration::from_secs(2));
        kubectl("get node k8s-worker01 -o jsonpath={.status.capacity.pods}").1.trim() == "110"
    });
    assert!(back || pods.trim() == "110", "the kubelet did not take the rolled-back setting: {pods}");
    assert_cluster_works();
}
/// A join to an API server whose CA is not the one the deployer pinned is refused
/// at once: a second deployer (its own project: the same token, its own Kubernetes
/// CA, as an attacker's API server would present another CA) joins kdnode5 to the
/// cluster on kdnode6-8; the join stops with the pin mismatch and the node is rolled
/// back. kdnode5 is booted afresh before and after.
fn a_join_to_an_api_server_with_another_ca_is_refused(dir: &Path, file: &Path) {
    // The other deployer: the same bootstrap token (so discovery gets as far as the CA),
    // its own secret store, hence its own Kubernetes CA and pin.
    let other = tempfile::tempdir().unwrap();
    let token = dir.join(".kdeploy/secrets/lab/kubeadm/token");
    std::fs::copy(&token, other.path().join("token")).unwrap();
    let lab = std::fs::read_to_string(file).unwrap();
    let nodes_at = lab.find("nodes = {").unwrap();
    let nodes_end = nodes_at + lab[nodes_at..].find("\n  };").unwrap() + 5;
    let joiner = format!(
        "{}nodes = {{\n    k8s-master = {{ address = \"10.77.0.16\"; roles = [ \"control-plane\" \"etcd\" ]; }};\n    \
         k8s-worker03 = {{ address = \"10.77.0.15\"; roles = [ \"worker\" ]; }};\n  }};{}",
        &lab[..nodes_at],
        &lab[nodes_end..]
    );
    let joiner = lane::text(&joiner).replacen("settings = {", "settings = {\n    kubeadm.tokenFile = \"token\";", 1);
    let other_file = other.path().join("lab.nix");
    std::fs::write(&other_file, joiner).unwrap();
    reboot(&[5]);
    let (out, j) = run(kdeploy("switch", &other_file, &["--on", "k8s-worker03"]));
    let all = text(&out);
    assert!(!out.status.success(), "a join with another CA's pin went through:\n{all}");
    assert!(all.contains("none of the public keys"), "not refused for the CA:\n{all}");
    assert!(all.contains("refusing to join"), "the join was retried instead of refused:\n{all}");
    assert_eq!(
        support::node::lab_project::statuses(&j).iter().find(|(n, _)| n == "k8s-worker03").map(|(_, s)| s.as_str()),
        Some("failed")
    );
    assert!(!on(5, "test -f /etc/kubernetes/kubelet.conf").0, "kdnode5 joined");
    let (_, nodes) = kubectl("get nodes --no-headers");
    assert!(!nodes.contains("k8s-worker03"), "{nodes}");
    reboot(&[5]);
}

/// The three-node cluster's nodes: (name, lab node, roles).
const THREE: [(&str, u32, &str); 3] =
    [("k8s-master", 6, "control-plane etcd"), ("k8s-worker01", 7, "worker etcd"), ("k8s-worker02", 8, "worker etcd")];

fn status_of(j: &serde_json::Value, node: &str) -> String {
    j["nodes"][node]["status"].as_str().unwrap_or_default().to_string()
}

/// Day two: a worker added to the running cluster (Ready, a replica scheduled on it),
/// then pruned from the definition with `switch --prune` (drained from the anchor, its
/// replica moved to another worker, its Node object gone, the node as the lab booted
/// it), while a client outside the cluster calls the Service every 100 ms.
fn a_worker_added_then_pruned_while_the_service_answers(dir: &Path) {
    let prober = Prober::start(&format!("http://{}:30080/", lane::address(6)), "kd-echo ");

    // kdnode5 joins as k8s-worker03; a third replica goes there (one per worker)
    let four = [&THREE[..], &[("k8s-worker03", 5, "worker")]].concat();
    let t0 = Instant::now();
    let (out, j, mut timeline) =
        run_timed(kdeploy("switch", &with_nodes(dir, "four.nix", &four, ""), &[]), prober.started());
    assert!(out.status.success(), "adding a worker failed:\n{}", text(&out));
    eprintln!("added a worker in {:?}", t0.elapsed());
    assert_eq!(status_of(&j, "k8s-worker03"), "changed", "{}", text(&out));
    let (ok, out) = kubectl("wait --for=condition=Ready node/k8s-worker03 --timeout=300s");
    assert!(ok, "the new worker is not Ready: {out}");
    assert!(kubectl("scale deployment/kd-echo --replicas=3").0);
    let (ok, out) = kubectl("rollout status deployment/kd-echo --timeout=300s");
    assert!(ok, "{out}");
    assert!(
        echo_replicas().iter().any(|(_, n)| n == "k8s-worker03"),
        "no replica on the new worker: {:?}",
        echo_replicas()
    );

    // pruned: drained and deleted from the anchor, then reset
    let t0 = Instant::now();
    let (out, _, pruning) =
        run_timed(kdeploy("switch", &with_nodes(dir, "three.nix", &THREE, ""), &["--prune"]), prober.started());
    timeline.extend(pruning);
    assert!(out.status.success(), "pruning the worker failed:\n{}", text(&out));
    eprintln!("pruned a worker in {:?}", t0.elapsed());
    assert!(text(&out).contains("drain-and-delete"), "the worker was not drained from the anchor:\n{}", text(&out));
    let (_, nodes) = kubectl("get nodes --no-headers");
    assert!(!nodes.contains("k8s-worker03"), "the pruned worker is still a node: {nodes}");
    let (ok, out) = kubectl("rollout status deployment/kd-echo --timeout=300s");
    assert!(ok, "{out}");
    let replicas = echo_replicas();
    assert_eq!(replicas.len(), 3, "{replicas:?}");
    assert!(replicas.iter().all(|(_, n)| n != "k8s-worker03"), "{replicas:?}");
    assert_as_booted(5);

    let calls = prober.stop();
    eprintln!("{}", calls.explained("adding and pruning a worker", &timeline));
    calls.assert_no_outage(5, "adding and pruning a worker", &timeline);
    // back to two replicas, one per worker
    assert_cluster_works();
}

/// Day two: three control planes (`kubeadm join --control-plane`, the certificate key)
/// and two workers, which reach the API through their local load balancer (nginx).
/// With the first control plane's API server stopped, the cluster stays usable: the
/// workers and the other control planes stay Ready and a new replica is scheduled and
/// started on a worker (its kubelet reaches another API server through the balancer).
/// Then the third control plane is pruned: its Node object is gone, the node is as
/// booted, etcd keeps its three members. A client outside the cluster calls the
/// Service every 100 ms throughout. Last, a worker dead for good (its link down): a
/// change of every node converges the others and skips it (exit 8), then it is
/// pruned without being reached (its Node deleted through the API) and reset when its
/// link comes back.
#[test]
fn three_control_planes_keep_the_cluster_usable_then_one_is_removed() {
    if !k8s_lab() {
        return;
    }
    let _lab = lab_lock_k8s();
    fresh_nodes();
    reboot(&[4, 5]);
    let (dir, _) = project();
    let cps = [("k8s-master", 6, "control-plane etcd"), ("k8s-master2", 7, "control-plane etcd")];
    // three etcd members that stay (etcd wants an odd number; the stdlib refuses two)
    let workers = [("k8s-worker01", 5, "worker etcd"), ("k8s-worker02", 4, "worker")];
    let five = [&cps[..], &[("k8s-master3", 8, "control-plane")], &workers[..]].concat();
    let file = with_nodes(dir.path(), "five.nix", &five, "");
    let t0 = Instant::now();
    let (out, _) = run(kdeploy("switch", &file, &[]));
    assert!(out.status.success(), "converge with three control planes failed:\n{}", text(&out));
    eprintln!("three control planes and two workers converged in {:?}", t0.elapsed());
    assert_cluster_of_works(5);
    let prober = Prober::start(&format!("http://{}:30080/", lane::address(5)), "kd-echo ");

    // the first API server stopped (its static pod's manifest moved away)
    let manifest = "/etc/kubernetes/manifests/kube-apiserver.yaml";
    assert!(on(6, &format!("mv {manifest} /etc/kubernetes/kube-apiserver.stopped")).0);
    let api_down = (0..60).any(|_| {
        std::thread::sleep(std::time::Duration::from_secs(2));
        !on(6, "bash -c 'exec 3<>/dev/tcp/127.0.0.1/6443' 2>/dev/null").0
    });
    assert!(api_down, "the first API server did not stop");
    let on_master2 = |args: &str| on(7, &format!("{KUBECTL} {args}"));
    assert!(on_master2("scale deployment/kd-echo --replicas=3").0);
    let (ok, out) = on_master2("rollout status deployment/kd-echo --timeout=300s");
    assert!(ok, "no new replica while the first API server is down: {out}");
    // past the controller manager's grace period (50 s): a node whose kubelet could
    // not reach any API server would be NotReady by now. k8s-master's is: its kubelet
    // talks to its own API server (as Kubespray's control planes do).
    std::thread::sleep(std::time::Duration::from_secs(60));
    let (_, nodes) = on_master2("get nodes --no-headers");
    let ready: Vec<&str> = nodes
        .lines()
        .filter(|l| l.split_whitespace().nth(1) == Some("Ready"))
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert_eq!(ready, ["k8s-master2", "k8s-master3", "k8s-worker01", "k8s-worker02"], "{nodes}");
    assert!(on(6, &format!("mv /etc/kubernetes/kube-apiserver.stopped {manifest}")).0);
    let (ok, out) = kubectl("get --raw /readyz --request-timeout=5s");
    let back = ok
        || (0..60).any(|_| {
            std::thread::sleep(std::time::Duration::from_secs(2));
            kubectl("get --raw /readyz --request-timeout=5s").0
        });
    assert!(back, "the first API server did not come back: {out}");

    // the third control plane pruned
    let four = [&cps[..], &workers[..]].concat();
    let smaller = with_nodes(dir.path(), "four.nix", &four, "");
    let t0 = Instant::now();
    let (out, _, timeline) = run_timed(kdeploy("switch", &smaller, &["--prune"]), prober.started());
    assert!(out.status.success(), "removing a control plane failed:\n{}", text(&out));
    eprintln!("removed a control plane in {:?}", t0.elapsed());
    let (_, nodes) = kubectl("get nodes --no-headers");
    assert!(!nodes.contains("k8s-master3"), "the pruned control plane is still a node: {nodes}");
    let (ok, members) = on(6, "ETCDCTL_ENDPOINTS=https://127.0.0.1:2379 /usr/local/bin/etcdctl.sh member list");
    assert!(ok, "{members}");
    assert_eq!(members.lines().count(), 3, "etcd members after the removal: {members}");
    assert_as_booted(8);
    assert_eq!(kubectl("get --raw /readyz").1.trim(), "ok");

    let calls = prober.stop();
    let during = "a stopped API server and a control plane removed";
    eprintln!("{}", calls.explained(during, &timeline));
    calls.assert_no_outage(5, during, &timeline);

    // a worker dead for good (its link down) and pruned: removed without being
    // reached, its Node deleted through the API on a live control plane; reset once
    // its link is up again
    let three = [&cps[..], &workers[..1]].concat();
    let without = with_nodes(dir.path(), "three.nix", &three, "");
    let down = LinkDown::take(4);
    // first a change of every node's files: the others converge, the dead one waits
    let note = "custom.files.\"/etc/kdeploy-test-note\" = { phase = \"preinstall\"; text = \"dead worker\\n\"; };";
    let noted = with_nodes(dir.path(), "noted.nix", &four, note);
    let (out, j) = run(kdeploy("switch", &noted, &["--max-unreachable", "1"]));
    assert_eq!(out.status.code(), Some(8), "a change without the dead worker:\n{}", text(&out));
    assert_eq!(status_of(&j, "k8s-worker02"), "unreachable", "{j}");
    assert_eq!(j["nodes"]["k8s-worker02"]["skipped"], true, "{j}");
    for (n, i) in [("k8s-master", 6), ("k8s-master2", 7), ("k8s-worker01", 5)] {
        assert_eq!(status_of(&j, n), "changed", "{n}: {j}");
        assert!(on(i, "cat /etc/kdeploy-test-note").1.contains("dead worker"), "{n}");
    }
    assert!(!on(4, "test -e /etc/kdeploy-test-note").0, "the dead worker was changed");
    let (out, j) = run(kdeploy("switch", &without, &["--prune"]));
    assert!(out.status.success(), "removing a dead worker failed:\n{}", text(&out));
    assert_eq!(status_of(&j, "k8s-worker02"), "gone", "{j}");
    let (_, nodes) = kubectl("get nodes --no-headers");
    assert!(!nodes.contains("k8s-worker02"), "the dead worker is still a node: {nodes}");
    assert_eq!(kubectl("get --raw /readyz").1.trim(), "ok");
    drop(down);
    wait_for_sshd(4);
    let (out, j) = run(kdeploy("switch", &without, &[]));
    assert!(out.status.success(), "resetting the worker that came back failed:\n{}", text(&out));
    assert_eq!(status_of(&j, "k8s-worker02"), "reset", "{j}");
    assert_as_booted(4);
    let (_, nodes) = kubectl("get nodes --no-headers");
    assert!(!nodes.contains("k8s-worker02"), "the worker that came back is a node again: {nodes}");
    reset_all(&without);
    for i in [6, 7, 5] {
        assert_as_booted(i);
    }
    reboot(&[4, 5]);
}

/// Day two: Kubernetes upgraded by one minor version, 1.34.4 -> 1.35.4 (`kubeadm
/// upgrade apply` on the anchor, then each node's kubelet replaced with the node
/// cordoned and drained), while a client outside the cluster calls the Service every
/// 100 ms. After: every kubelet and the API server say v1.35.4, the cluster works, the
/// re-run is a no-op. The failed calls (goal: none) and the upgrade's time are reported.
fn an_upgrade_by_one_minor_version_while_the_service_answers(dir: &Path) -> Option<PathBuf> {
    let newer = Path::new(BIN).join("kubernetes-1.35.4");
    if !newer.join("done").exists() {
        let why = "needs Kubernetes 1.35.4 built: KDEPLOY_K8S_VERSION=1.35.4 lab/build-k8s.sh kubernetes";
        assert!(std::env::var_os("CI").is_none(), "{why} (CI is set)");
        eprintln!("SKIPPED: {why}");
        return None;
    }
    let push = Command::new(repo().join("lab/images.sh"))
        .args(["push", "10.77.0.1:5000"])
        .env("KDEPLOY_K8S_VERSION", "1.35.4")
        .output()
        .unwrap();
    assert!(push.status.success(), "lab/images.sh push (1.35.4): {}", String::from_utf8_lossy(&push.stderr));

    // the same cluster at 1.35.4 (its kubelet keeps cgroup v1: the lab's nodes have no other)
    let upgraded = variant(dir, "upgraded.nix", "    kubelet.failCgroupV1 = false;\n");
    let lab = std::fs::read_to_string(&upgraded).unwrap();
    let lab =
        lab.replace("kubernetes-1.34.4", "kubernetes-1.35.4").replace("version = \"1.34.4\"", "version = \"1.35.4\"");
    std::fs::write(&upgraded, lab).unwrap();

    let prober = Prober::start(&format!("http://{}:30080/", lane::address(6)), "kd-echo ");
    let t0 = Instant::now();
    let (out, j, timeline) = run_timed(kdeploy("switch", &upgraded, &[]), prober.started());
    let took = t0.elapsed();
    let calls = prober.stop();
    assert!(out.status.success(), "the upgrade failed:\n{}", text(&out));
    eprintln!("upgraded 1.34.4 -> 1.35.4 in {took:?}; {}", calls.explained("the upgrade", &timeline));
    assert_eq!(statuses(&j), ["changed"; 3], "{}", text(&out));
    // (a restarted kubelet reports its version with its next status update)
    let kubelets = || kubectl("get nodes -o jsonpath={.items[*].status.nodeInfo.kubeletVersion}").1;
    let all_new = (0..30).any(|_| {
        std::thread::sleep(std::time::Duration::from_secs(2));
        kubelets().split_whitespace().collect::<Vec<_>>() == ["v1.35.4"; 3]
    });
    assert!(all_new, "not every kubelet runs v1.35.4: {}", kubelets());
    let (_, version) = kubectl("get --raw /version");
    assert!(version.contains("\"gitVersion\": \"v1.35.4\""), "{version}");
    let (_, unschedulable) = kubectl("get nodes -o jsonpath={.items[*].spec.unschedulable}");
    assert_eq!(unschedulable.trim(), "", "a node was left cordoned");
    calls.assert_no_outage(5, "the upgrade", &timeline);
    // the drains moved the replicas wherever there was room (both can share a worker
    // now); a restart spreads them again, as a user would — once no node carries a
    // taint but the control planes' own (a kubelet just restarted is briefly not-ready,
    // and the spread leaves a tainted node out: seen, both replicas on one worker)
    let taints = || kubectl("get nodes -o jsonpath={.items[*].spec.taints[*].key}").1;
    let settled = (0..60).any(|_| {
        std::thread::sleep(std::time::Duration::from_secs(1));
        taints().split_whitespace().all(|t| t == "node-role.kubernetes.io/control-plane")
    });
    assert!(settled, "nodes still tainted a minute after the upgrade: {}", taints());
    assert!(kubectl("rollout restart deployment/kd-echo").0);
    assert!(kubectl("rollout status deployment/kd-echo --timeout=300s").0);
    assert_cluster_works();

    let (out, j) = run(kdeploy("switch", &upgraded, &[]));
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(statuses(&j), ["unchanged"; 3], "the re-run after the upgrade was not a no-op:\n{}", text(&out));
    Some(upgraded)
}

/// `kdeploy reset FILE --yes`, which must succeed.
fn reset_all(file: &Path) {
    let (out, _) = run(kdeploy("reset", file, &["--yes"]));
    assert!(out.status.success(), "reset failed:\n{}", text(&out));
}

fn reboot(nodes: &[u32]) {
    let nodes: Vec<String> = nodes.iter().map(|&i| lane::node(i).to_string()).collect();
    let out = Command::new(repo().join("lab/lab.sh")).arg("reboot").args(&nodes).output().unwrap();
    assert!(out.status.success(), "lab.sh reboot: {}", String::from_utf8_lossy(&out.stderr));
}
