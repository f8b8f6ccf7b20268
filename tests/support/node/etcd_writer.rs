//! A client writing to the lab's etcd the whole time a switch runs, as
//! the issues name it: key kd-writer/N for N = 1, 2, …, each write retried
//! 5 times, 0.2 s apart, through every member's endpoint. Afterwards: how
//! many writes were acknowledged, which were lost, and whether every
//! acknowledged key is in etcd. In the test's lane (`lane.rs`).

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use super::lab_project::ssh;

const ENDPOINTS: &str = "https://10.77.0.11:2379,https://10.77.0.12:2379,https://10.77.0.13:2379";
const LOCAL: &str = "ETCDCTL_ENDPOINTS=https://127.0.0.1:2379 /usr/local/bin/etcdctl.sh";

/// Start the writer on k8s-master (whose etcd stays in every test) and
/// wait until it has written 20 keys.
pub fn start() {
    // a writer left by a test that failed half-way stops first
    ssh(1, "[ -f /tmp/kd-writer.pid ] && kill $(cat /tmp/kd-writer.pid) 2>/dev/null; rm -f /tmp/kd-writer.pid; true");
    ssh(1, &format!("{LOCAL} del kd-writer/ --prefix >/dev/null"));
    let endpoints = super::lane::text(ENDPOINTS);
    let script = format!(
        "rm -f /tmp/kd-writer.stop; : > /tmp/kd-writer.log; \
         ( i=0; while [ ! -e /tmp/kd-writer.stop ]; do i=$((i+1)); r=lost; \
             for t in 1 2 3 4 5; do \
               if ETCDCTL_ENDPOINTS={endpoints} /usr/local/bin/etcdctl.sh --dial-timeout=1s --command-timeout=1s \
                    put kd-writer/$i v$i >/dev/null 2>&1; then r=ack; break; fi; sleep 0.2; \
             done; echo \"$r $i\" >> /tmp/kd-writer.log; done ) >/dev/null 2>&1 </dev/null & echo $! > /tmp/kd-writer.pid"
    );
    ssh(1, &script);
    let t0 = Instant::now();
    while log().len() < 20 {
        assert!(t0.elapsed() < Duration::from_secs(30), "the writer does not write: {:?}", log());
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// One line per key: ("ack" | "lost", N).
pub fn log() -> Vec<(String, u64)> {
    ssh(1, "cat /tmp/kd-writer.log")
        .lines()
        .filter_map(|l| {
            let (r, n) = l.split_once(' ')?;
            Some((r.to_string(), n.trim().parse().ok()?))
        })
        .collect()
}

/// Stop the writer (after two more seconds of writes) and check it lost
/// nothing, wrote at least `min` keys, and every acknowledged key is in
/// etcd; then remove its keys. `during` names what ran, for the messages.
pub fn stop_and_check(during: &str, min: usize) {
    std::thread::sleep(Duration::from_secs(2));
    ssh(1, "touch /tmp/kd-writer.stop");
    std::thread::sleep(Duration::from_secs(3));
    let log = log();
    let lost: Vec<u64> = log.iter().filter(|(r, _)| r == "lost").map(|(_, n)| *n).collect();
    let acked: Vec<u64> = log.iter().filter(|(r, _)| r == "ack").map(|(_, n)| *n).collect();
    eprintln!("writer: {} acknowledged, {} lost during {during}", acked.len(), lost.len());
    assert!(lost.is_empty(), "writes lost during {during}: {lost:?}");
    assert!(acked.len() >= min, "too few writes to show anything during {during}: {}", acked.len());
    let keys = ssh(1, &format!("{LOCAL} get kd-writer/ --prefix --keys-only"));
    let present: BTreeSet<u64> =
        keys.lines().filter_map(|l| l.strip_prefix("kd-writer/")?.trim().parse().ok()).collect();
    let missing: Vec<&u64> = acked.iter().filter(|n| !present.contains(n)).collect();
    assert!(missing.is_empty(), "acknowledged writes missing from etcd after {during}: {missing:?}");
    ssh(1, &format!("{LOCAL} del kd-writer/ --prefix >/dev/null"));
}
