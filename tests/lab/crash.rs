//! What happens when the deployer does not finish, against the real lab:
//! killed at each failpoint, interrupted by Ctrl-C, cut off from a node
//! while it holds the node's lock, paused past its locks while another run
//! takes them over. Each time the next plain run must leave
//! every node exactly as `eval` says (`assert_deployed`), with every unit
//! whose inputs changed restarted, and a re-run must be a no-op.

use crate::support;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use support::node::lab_check::assert_deployed;
use support::node::lab_project::*;
use support::node::{lab_lock_any, lab_up, lane};
use support::KillOnDrop;

/// When containerd last (re)started on each node.
fn containerd_started() -> Vec<String> {
    (1..=3).map(|i| active_since(i, "containerd")).collect()
}

fn statuses_all(j: &serde_json::Value, want: &str) -> bool {
    j["nodes"].as_object().is_some_and(|m| m.values().all(|n| n["status"] == want))
}

fn lock_free_inside(i: u32) -> bool {
    inside(i, "flock -n /var/lib/kdeploy/lock true").status.success()
}

#[test]
fn a_deployer_killed_at_each_failpoint_is_finished_by_the_next_run() {
    let _g = lab_lock_any();
    if !lab_up() {
        return;
    }
    let p = Project::new();
    for (k, point) in ["after-push", "after-flip", "after-units", "before-commit"].iter().enumerate() {
        p.restore();
        let old_config = config(1);
        let before = containerd_started();
        // a containerd setting: new config on every node, containerd restarts
        let b = p.variant(&format!("b{k}"), &format!("containerd.maxContainerLogLineSize = {};", 20000 + k));
        let mut c = kdeploy_cmd("switch", &b, None, &[]);
        c.env("KDEPLOY_FAILPOINT", point);
        let (out, _) = run(c);
        assert_eq!(out.status.code(), None, "{point}: the deployer must die by a signal\n{}", text(&out));
        let died = String::from_utf8_lossy(&out.stderr).to_string();
        assert!(died.contains(&format!("failpoint {point}")), "{point}: {died}");
        match *point {
            // nothing live changed yet
            "after-push" => assert_eq!(config(1), old_config, "{point}"),
            // the hole this closes: some node has the new file and the old process
            "after-flip" => {
                let flipped: Vec<u32> = (1..=3).filter(|&i| config(i) != old_config).collect();
                assert!(!flipped.is_empty(), "{point}: no node flipped before the deployer died");
                let now = containerd_started();
                assert!(
                    flipped.iter().any(|&i| now[i as usize - 1] == before[i as usize - 1]),
                    "{point}: containerd already restarted everywhere the config flipped"
                );
            }
            _ => {}
        }
        // the next plain run finishes the job
        let (out, j) = switch(&b);
        assert!(out.status.success(), "{point}: next run\n{}", text(&out));
        assert_deployed(&b);
        let after = containerd_started();
        for i in 0..3 {
            assert_ne!(after[i], before[i], "{point}: containerd on node {} runs the old config", i + 1);
        }
        assert!(j["nodes"].as_object().is_some(), "{point}: recap\n{}", text(&out));
        // and then nothing is left to do
        let (out, j) = switch(&b);
        assert!(out.status.success(), "{point}: re-run\n{}", text(&out));
        assert!(statuses_all(&j, "unchanged"), "{point}: re-run must be a no-op\n{}", text(&out));
        assert_eq!(containerd_started(), after, "{point}: the no-op restarted containerd");
    }
    p.restore();
}

#[test]
fn ctrl_c_puts_touched_nodes_back_and_releases_the_locks() {
    let _g = lab_lock_any();
    if !lab_up() {
        return;
    }
    let p = Project::new();
    p.restore();
    let old_config = config(1);
    // container-runtime changes first; the etcd phase then waits in a hook
    let b = p.hook_variant("b", "containerd.maxContainerLogLineSize = 31000;", "etcd", "sleep 8");
    let mut c = kdeploy_cmd("switch", &b, None, &[]);
    let child = c.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    wait_for("the new containerd config on every node", Duration::from_secs(60), || {
        (1..=3).all(|i| config(i) != old_config)
    });
    let sigint = Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap();
    assert!(sigint.success());
    let out = child.wait_with_output().unwrap();
    let t = text(&out);
    assert_eq!(out.status.code(), Some(130), "{t}");
    let recap: serde_json::Value = serde_json::from_slice(&out.stdout).expect("a JSON recap on stdout");
    for n in ["k8s-master", "k8s-worker01", "k8s-worker02"] {
        let rolled = recap["nodes"][n]["rolled_back"].as_array().cloned().unwrap_or_default();
        assert!(rolled.iter().any(|x| x == "container-runtime"), "{n} not put back\n{t}");
    }
    for i in 1..=3 {
        assert_eq!(config(i), old_config, "node {i} keeps the interrupted run's config");
        assert!(lock_free_inside(i), "node {i} still locked");
    }
    assert_deployed(&p.base());
}

#[test]
fn a_lock_held_by_a_cut_off_deployer_is_taken_over() {
    let _g = lab_lock_any();
    if !lab_up() {
        return;
    }
    let p = Project::new();
    p.restore();
    // the first run holds every lock for a minute in a hook; the hook
    // outlives its deployer on the nodes, and the next run waits for it
    // (up to 40 s) before it changes anything
    let slow = p.slow_variant("slow", "containerd.maxContainerLogLineSize = 32000;", 60);
    let mut c = kdeploy_cmd("switch", &slow, None, &[]);
    let mut first = c.stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap();
    wait_for("the first run to hold node 1's lock", Duration::from_secs(30), || !lock_free_inside(1));
    // cut node 1 off, then the deployer vanishes: no FIN reaches the node
    let link = |state: &str| {
        let veth = format!("kdv{}", lane::node(1));
        let ok = Command::new("ip").args(["link", "set", &veth, state]).status().unwrap().success();
        assert!(ok, "ip link set {veth} {state}");
    };
    link("down");
    first.kill().unwrap();
    first.wait().unwrap();
    let cut = Instant::now();
    // the holder stops waiting for a heartbeat that never comes
    let freed = (|| {
        while cut.elapsed() < Duration::from_secs(60) {
            if lock_free_inside(1) {
                return Some(cut.elapsed());
            }
            std::thread::sleep(Duration::from_millis(500));
        }
        None
    })();
    link("up");
    let freed = freed.expect("node 1's lock still held 60 s after its deployer was cut off");
    eprintln!("node 1's lock was free {freed:?} after the cut");
    // the next run converges with no manual step
    let (out, _) = switch(&p.base());
    assert!(out.status.success(), "{}", text(&out));
    assert_deployed(&p.base());
}

#[test]
fn a_silent_holder_is_waited_out_and_a_live_one_refused() {
    let _g = lab_lock_any();
    if !lab_up() {
        return;
    }
    let p = Project::new();
    p.restore();
    // (a minute: the hook goes on while its deployer is frozen, and the
    // run taking over waits for it, up to 40 s, before changing anything)
    let slow = p.slow_variant("slow", "containerd.maxContainerLogLineSize = 33000;", 60);
    let mut c = kdeploy_cmd("switch", &slow, None, &[]);
    let mut first = c.stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap();
    wait_for("the first run to hold node 1's lock", Duration::from_secs(30), || !lock_free_inside(1));
    // alive and beating: refused
    let (out, _) = switch(&p.base());
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    assert!(text(&out).contains("locked by"), "{}", text(&out));
    // frozen: its connections stay open but it says nothing any more
    let pid = first.id().to_string();
    assert!(Command::new("kill").args(["-STOP", &pid]).status().unwrap().success());
    let t0 = Instant::now();
    let (out, _) = switch(&p.base());
    let took = t0.elapsed();
    first.kill().unwrap();
    first.wait().unwrap();
    assert!(out.status.success(), "{}", text(&out));
    assert!(took < Duration::from_secs(90), "taking over a silent holder's lock took {took:?}");
    eprintln!("took over a silent holder's locks in {took:?}");
    assert_deployed(&p.base());
}

/// Whether process `pid` is stopped (SIGSTOP).
fn stopped(pid: u32) -> bool {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    stat.rsplit_once(") ").is_some_and(|(_, rest)| rest.starts_with('T'))
}

/// Blobs of the linked phases that node `i`'s store lacks, one per line.
fn missing_blobs(i: u32) -> String {
    ssh(
        i,
        "cd /var/lib/kdeploy && for m in phases/*/manifest; do grep \"^f$(printf '\\t')\" \"$m\" | cut -f5; done \
         | sort -u | while read -r h; do [ -f store/$h ] || [ -f secrets/$h ] || echo \"missing $h\"; done",
    )
}

/// A deployer paused (Ctrl-Z, a laptop asleep) past its locks' 30 s,
/// whose nodes another run took over and converged meanwhile, stops when
/// it resumes, before its next change, instead of interleaving with the
/// other run: stopped after its push (next: the first link) or before its
/// commit (next: the commit), it exits 5 naming each node's lost lock, and
/// every node stays on the second run's generation with its blobs.
#[test]
fn a_paused_deployer_that_lost_its_locks_stops_instead_of_interleaving() {
    let _g = lab_lock_any();
    if !lab_up() {
        return;
    }
    let p = Project::new();
    p.restore();
    for (k, point) in ["after-push", "before-commit"].iter().enumerate() {
        let first = p.variant(&format!("paused{k}"), &format!("containerd.maxContainerLogLineSize = {};", 34000 + k));
        let second = p.variant(&format!("second{k}"), &format!("containerd.maxContainerLogLineSize = {};", 35000 + k));
        let mut c = kdeploy_cmd("switch", &first, None, &[]);
        c.env("KDEPLOY_FAILPOINT", format!("{point}:stop"));
        let paused = c.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
        // a failed assertion below must not leave it stopped, its SSH
        // channels open and a node command waiting on them
        let _kill = KillOnDrop(paused.id());
        wait_for(&format!("the first run to stop at {point}"), Duration::from_secs(180), || stopped(paused.id()));
        // the second run waits out the paused one's locks and converges
        let t0 = Instant::now();
        let (out, _) = switch(&second);
        assert!(out.status.success(), "{point}: second run\n{}", text(&out));
        eprintln!("{point}: the second run took over and converged in {:?}", t0.elapsed());
        // the first run resumes
        assert!(Command::new("kill").args(["-CONT", &paused.id().to_string()]).status().unwrap().success());
        let out = paused.wait_with_output().unwrap();
        let t = text(&out);
        assert_eq!(out.status.code(), Some(5), "{point}: the resumed run must stop, lock lost\n{t}");
        for n in ["k8s-master", "k8s-worker01", "k8s-worker02"] {
            assert!(t.contains(&format!("[{n}] FAILED: this run lost the node's lock")), "{point}: {n}\n{t}");
        }
        assert!(!t.contains("committed generation"), "{point}: the resumed run committed\n{t}");
        // every node as the second run left it, its blobs there
        assert_deployed(&second);
        for i in 1..=3 {
            assert_eq!(missing_blobs(i), "", "{point}: node {i}");
        }
        let (out, j) = switch(&second);
        assert!(out.status.success() && statuses_all(&j, "unchanged"), "{point}: re-run\n{}", text(&out));
    }
    p.restore();
}
