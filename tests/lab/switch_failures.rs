//! `kdeploy switch` failure paths and `kdeploy rollback` against the real
//! lab (`lab/lab.sh up 3`). The lab is shared: every test takes one lock
//! (serial), works from its own temp project (copies of tests/clusters/lab-etcd.nix,
//! so its own .kdeploy history) and leaves the nodes on the unmodified lab
//! cluster. Lab down: skipped, or a failure when CI is set.

use crate::support;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use support::node::lab_check::assert_deployed;
use support::node::lab_project::*;
use support::node::{lab_lock_any, lab_up, lane, repo};

#[test]
fn rollback_returns_to_previous_generation() {
    let _g = lab_lock_any();
    if !lab_up() {
        return;
    }
    let p = Project::new();
    let t0 = Instant::now();
    let (out, _) = switch(&p.base());
    assert!(out.status.success(), "{}", text(&out));
    let a = config(2);
    let b_file = p.variant("b", "containerd.maxContainerLogLineSize = 32768;");
    let (out, _) = switch(&b_file);
    assert!(out.status.success(), "{}", text(&out));
    assert!(config(2).contains("32768"));
    let etcd_since = active_since(2, "etcd");
    let ctr_since = active_since(2, "containerd");

    let t1 = Instant::now();
    let (out, j) = run(kdeploy_cmd("rollback", &p.base(), None, &[]));
    eprintln!("rollback took {:?} (whole test so far {:?})", t1.elapsed(), t0.elapsed());
    assert!(out.status.success(), "{}", text(&out));
    for (name, n) in j["nodes"].as_object().unwrap() {
        assert_eq!(n["status"], "changed", "{name}: {j}");
        assert_eq!(n["phases"], serde_json::json!(["container-runtime"]), "{name}: {j}");
        assert_eq!(n["units"]["restarted"], serde_json::json!(["containerd.service"]), "{name}: {j}");
    }
    for i in 1..=3 {
        assert_eq!(config(i), a, "node {i}: config.toml must be A's again");
        assert_eq!(ssh(i, "systemctl is-active containerd").trim(), "active");
    }
    assert_eq!(active_since(2, "etcd"), etcd_since, "etcd must not restart");
    assert_ne!(active_since(2, "containerd"), ctr_since, "containerd must restart");
    assert_deployed(&p.base());

    // the rollback was committed: switching to A again is a no-op everywhere
    let (out, j) = switch(&p.base());
    assert!(out.status.success(), "{}", text(&out));
    assert!(statuses(&j).iter().all(|(_, s)| s == "unchanged"), "{j}");

    // --to the B generation, then the generations list shows the rollbacks
    let gens = Command::new(env!("CARGO_BIN_EXE_kdeploy"))
        .args(["generations", p.base().to_str().unwrap(), "--json"])
        .output()
        .unwrap();
    let gens: serde_json::Value = serde_json::from_slice(&gens.stdout).unwrap();
    let b_number =
        gens.as_array().unwrap().iter().rev().find(|g| g["rollbackOf"].is_null()).unwrap()["number"].to_string();
    assert!(gens.as_array().unwrap().last().unwrap()["rollbackOf"].is_number(), "{gens}");
    let (out, _) = run(kdeploy_cmd("rollback", &p.base(), None, &["--to", &b_number]));
    assert!(out.status.success(), "{}", text(&out));
    assert!(config(3).contains("32768"), "--to the B generation");
    assert_deployed(&b_file);
    p.restore();
    assert_eq!(config(1), a);
}

#[test]
fn failing_unit_rolls_back_every_node() {
    let _g = lab_lock_any();
    if !lab_up() {
        return;
    }
    let p = Project::new();
    p.restore();
    let before = snapshot();
    // invalid TOML on one node only: containerd fails to start there
    let bad = p.edited(
        "bad",
        "k8s-worker02 = { address = \"10.77.0.13\";",
        "k8s-worker02 = { settings.containerd.extraConfig = \"this is [[ not toml\"; address = \"10.77.0.13\";",
    );
    let t0 = Instant::now();
    let (out, j) = switch(&bad);
    eprintln!("failed switch took {:?}", t0.elapsed());
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    let err = j["nodes"]["k8s-worker02"]["error"].as_str().unwrap_or("").to_string();
    assert_eq!(j["nodes"]["k8s-worker02"]["status"], "failed", "{j}");
    assert!(err.contains("container-runtime") && err.contains("containerd"), "{err}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("k8s-worker02"), "{stderr}");
    // The report names the unit and carries containerd's own complaint
    // about the file, from the node's journal.
    assert!(
        stderr.contains("[k8s-worker02] FAILED in phase container-runtime, unit containerd.service: systemctl failed"),
        "{stderr}"
    );
    assert!(stderr.contains("kdeploy-node: unit containerd.service failed to restart"), "{stderr}");
    assert!(stderr.contains("containerd: failed to load TOML: /etc/containerd/config.toml"), "{stderr}");
    assert_eq!(snapshot(), before, "previous generation must run again everywhere");
    assert_deployed(&p.base());
}

#[test]
fn unreachable_node_changes_nothing() {
    let _g = lab_lock_any();
    if !lab_up() {
        return;
    }
    let p = Project::new();
    p.restore();
    let before = snapshot();
    let b = p.variant("b", "containerd.maxContainerLogLineSize = 32768;");
    let child = nspawn_child(3);
    // sshd stopped, and the connections it had made (a kept one too: a
    // stopped sshd leaves its sessions running) ended
    let stop = inside(3, "systemctl stop ssh.service ssh.socket && { pkill -x sshd; pkill -x sshd-session; true; }");
    assert!(stop.status.success(), "{stop:?}");
    let t0 = Instant::now();
    let (out, j) = switch(&b);
    eprintln!("switch with a node down took {:?}", t0.elapsed());
    let start =
        Command::new("nsenter").args(["-t", &child, "-a", "systemctl", "start", "ssh.service"]).output().unwrap();
    assert!(start.status.success(), "restoring sshd on node 3: {start:?}");
    assert_eq!(out.status.code(), Some(4), "{}", text(&out));
    assert_eq!(j["nodes"]["k8s-worker02"]["status"], "unreachable", "{j}");
    // wait for sshd, then nothing may have changed
    let deadline = Instant::now() + Duration::from_secs(20);
    while !ssh(3, "true").is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(300));
    }
    assert_eq!(snapshot(), before);
    assert_deployed(&p.base());
}

#[test]
fn switch_through_a_jump_host() {
    let _g = lab_lock_any();
    if !lab_up() {
        return;
    }
    let p = Project::new();
    p.restore();
    // the cluster's ssh.jumpHost is used: a bastion that does not answer leaves every node unreachable
    let dead =
        p.variant("dead", "containerd.maxContainerLogLineSize = 32768; ssh.jumpHost = \"root@10.77.0.11:2222\";");
    let (out, j) = switch(&dead);
    assert_eq!(out.status.code(), Some(4), "{}", text(&out));
    assert!(statuses(&j).iter().all(|(_, s)| s == "unreachable"), "{j}");
    assert!(!config(1).contains("32768"));
    // through kdeploy's node 1 as the bastion, the change lands everywhere
    let via = p.variant("via", "containerd.maxContainerLogLineSize = 32768; ssh.jumpHost = \"root@10.77.0.11:22\";");
    let (out, j) = switch(&via);
    assert!(out.status.success(), "{}", text(&out));
    assert!(statuses(&j).iter().all(|(_, s)| s == "changed"), "{j}");
    assert_deployed(&via);
    // and rollback finds the nodes the same way (recorded with the generation)
    let (out, _) = run(kdeploy_cmd("rollback", &p.base(), None, &[]));
    assert!(out.status.success(), "{}", text(&out));
    assert!(!config(2).contains("32768"));
    p.restore();
}

#[test]
fn changed_host_key_is_refused() {
    let _g = lab_lock_any();
    if !lab_up() {
        return;
    }
    let p = Project::new();
    p.restore();
    let before = snapshot();
    let b = p.variant("b", "containerd.maxContainerLogLineSize = 32768;");
    // node 3's entry carries node 1's key
    let node3 = lane::text("10.77.0.13");
    let kh = std::fs::read_to_string(repo().join(".lab/known_hosts")).unwrap();
    let key_of = |addr: &str| {
        kh.lines()
            .find(|l| {
                l.split_whitespace()
                    .next()
                    .is_some_and(|h| h.split(',').any(|h| h == addr || h == format!("[{addr}]:22")))
            })
            .map(|l| l.split_whitespace().skip(1).collect::<Vec<_>>().join(" "))
            .unwrap_or_else(|| panic!("no known_hosts entry for {addr}:\n{kh}"))
    };
    let wrong: String = kh
        .lines()
        .map(|l| {
            let host = l.split_whitespace().next().unwrap_or("");
            if host.split(',').any(|h| h == node3 || h == format!("[{node3}]:22")) {
                format!("{host} {}\n", key_of(&lane::text("10.77.0.11")))
            } else {
                format!("{l}\n")
            }
        })
        .collect();
    let f = p.dir.path().join("known_hosts");
    std::fs::write(&f, &wrong).unwrap();
    let (out, j) = run(kdeploy_cmd("switch", &b, Some(&f), &[]));
    assert_eq!(out.status.code(), Some(4), "{}", text(&out));
    let err = j["nodes"]["k8s-worker02"]["error"].as_str().unwrap_or("");
    assert_eq!(j["nodes"]["k8s-worker02"]["status"], "unreachable", "{j}");
    let line = 1 + wrong.lines().position(|l| l.contains(&node3)).expect("node 3's line");
    assert!(
        err.contains(&format!("HOST KEY CHANGED: the key it presents does not match {}:{line}", f.display())),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&f).unwrap(), wrong, "known_hosts must not be rewritten");
    assert_eq!(snapshot(), before);
    assert_deployed(&p.base());
}

#[test]
fn concurrent_switch_is_refused() {
    let _g = lab_lock_any();
    if !lab_up() {
        return;
    }
    let p = Project::new();
    p.restore();
    // the first run sleeps 15 s in a pre hook of container-runtime, so it
    // still holds the locks (and beats) while the second watches for up
    // to 12 s for a heartbeat: a live holder is refused, never broken
    let b = p.slow_variant("slow", "containerd.maxContainerLogLineSize = 32768;", 15);
    let c = p.variant("c", "containerd.maxContainerLogLineSize = 65536;");
    let mut first = kdeploy_cmd("switch", &b, None, &[]);
    let first = first.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    // wait until the first run holds node 1's lock
    let deadline = Instant::now() + Duration::from_secs(20);
    while inside(1, "flock -n /var/lib/kdeploy/lock true").status.success() {
        assert!(Instant::now() < deadline, "first switch never took the lock");
        std::thread::sleep(Duration::from_millis(20));
    }
    let (out, _) = run(kdeploy_cmd("switch", &c, None, &[]));
    let second = text(&out);
    let first = first.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(3), "{second}");
    assert!(second.contains("locked by"), "{second}");
    assert!(first.status.success(), "{}", text(&first));
    assert_deployed(&b);
    p.restore();
}

#[test]
fn a_hook_past_its_deadline_is_killed_and_the_node_put_back() {
    let _g = lab_lock_any();
    if !lab_up() {
        return;
    }
    let p = Project::new();
    p.restore();
    let before = snapshot();
    // A hook that would hang for ten minutes, in a phase that changes.
    let hang = p.hook_variant("hang", "containerd.extraConfig = \"# hang\";", "container-runtime", "sleep 600");
    let t0 = Instant::now();
    let (out, j) = run(kdeploy_cmd("switch", &hang, None, &["--hook-timeout", "3"]));
    let took = t0.elapsed();
    eprintln!("switch with a hanging hook took {took:?}");
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    assert!(took < Duration::from_secs(120), "the deadline did not stop the hook: {took:?}");
    let failed: Vec<_> = statuses(&j).into_iter().filter(|(_, s)| s == "failed").collect();
    assert!(!failed.is_empty(), "{j}");
    for (node, _) in &failed {
        let err = j["nodes"][node]["error"].as_str().unwrap_or("");
        assert!(err.contains("did not finish within 3 s (its deadline) and was killed"), "{node}: {err}");
    }
    // Nothing of the hook is left running, and every node runs the
    // generation it had.
    for i in 1..=3 {
        assert_eq!(ssh(i, "pgrep -f 'sleep [6]00' || true").trim(), "", "node {i} still runs the hook");
    }
    assert_eq!(snapshot(), before, "every node back on its previous generation");
    assert_deployed(&p.base());
}
