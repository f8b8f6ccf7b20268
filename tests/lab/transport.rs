//! `SshHost` against real lab nodes (`lab/lab.sh up 3`): exec with binary
//! stdin/stdout, host key verification (unknown and changed keys refused,
//! trust-on-first-use only when asked), parallel connect with per-node
//! errors, and the numbers (connect time, round trip, upload throughput).
//! Skipped with a message when the lab is down, failed when CI is set.

use crate::support;
use std::io::Read;
use std::time::{Duration, Instant};

use kdeploy::transport::{connect_all, Error, Host, HostKeyPolicy, NodeTarget, SshHost, SshOptions};
use support::node::{addr, connect, lab_dir, lab_lock_nodes, lab_options, lab_up};

fn random(n: usize) -> Vec<u8> {
    let mut v = vec![0u8; n];
    std::fs::File::open("/dev/urandom").unwrap().read_exact(&mut v).unwrap();
    v
}

#[tokio::test(flavor = "multi_thread")]
async fn exec_is_binary_safe_and_reports_status() {
    if !lab_up() {
        return;
    }
    let _lab = lab_lock_nodes(1..=3);
    let h = connect(1).await;
    let data = random(1 << 20);
    let out = h.exec("cat", Some(&data)).await.unwrap();
    assert_eq!(out.status, 0);
    assert!(out.stdout == data, "1 MiB of random bytes came back altered");
    // and the node saw the same bytes
    let sum = h.exec("sha256sum", Some(&data)).await.unwrap();
    let want = support::node::blob(data.clone()).sha;
    assert!(sum.stdout_str().starts_with(&want));
    let out = h.exec("printf 'out\\0\\377'; echo err >&2; exit 7", None).await.unwrap();
    assert_eq!(out.status, 7);
    assert_eq!(out.stdout, b"out\0\xff");
    assert_eq!(out.stderr, b"err\n");
    // many concurrent commands on the one connection
    let outs = futures_join(&h, 20).await;
    assert!(outs.iter().enumerate().all(|(i, o)| o == &format!("{i}\n")));
    h.close().await.unwrap();
}

/// `n` commands in flight at once on the one connection. Each sleeps 0.5 s
/// on the node, so the whole batch finishing in well under `n` × 0.5 s shows
/// they ran concurrently (awaited one by one they would take `n` × 0.5 s).
async fn futures_join(h: &SshHost, n: usize) -> Vec<String> {
    let started = std::time::Instant::now();
    let outs = futures::future::join_all(
        (0..n).map(|i| async move { h.exec(&format!("sleep 0.5; echo {i}"), None).await.unwrap().stdout_str() }),
    )
    .await;
    let took = started.elapsed();
    assert!(took.as_secs_f64() < 0.25 * n as f64, "{n} commands took {took:?}: not run concurrently");
    outs
}

#[tokio::test(flavor = "multi_thread")]
async fn unknown_host_is_refused_unless_accept_new() {
    if !lab_up() {
        return;
    }
    let _lab = lab_lock_nodes(1..=3);
    let dir = tempfile::tempdir().unwrap();
    let kh = dir.path().join("known_hosts");
    std::fs::write(&kh, "").unwrap();
    let mut opts = lab_options();
    opts.host_keys = HostKeyPolicy::Strict(kh.clone());
    let err = SshHost::connect("kdnode1", &addr(1), &opts).await.err().expect("must refuse");
    assert!(matches!(err, Error::HostKeyUnknown { .. }), "{err}");
    let msg = err.to_string();
    assert!(msg.contains("kdnode1") && msg.contains(kh.to_str().unwrap()), "{msg}");

    opts.host_keys = HostKeyPolicy::AcceptNew(kh.clone());
    let h = SshHost::connect("kdnode1", &addr(1), &opts).await.unwrap();
    assert_eq!(h.exec("hostname", None).await.unwrap().stdout_str(), "kdnode1\n");
    h.close().await.unwrap();
    // the recorded key is the node's real key: strict mode now accepts it
    let recorded = std::fs::read_to_string(&kh).unwrap();
    let lab = std::fs::read_to_string(lab_dir().join("known_hosts")).unwrap();
    let lab_key = lab.lines().find(|l| l.starts_with("kdnode1,")).unwrap().split(' ').nth(2).unwrap();
    assert!(recorded.contains(lab_key), "recorded {recorded:?}");
    opts.host_keys = HostKeyPolicy::Strict(kh);
    SshHost::connect("kdnode1", &addr(1), &opts).await.unwrap().close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn changed_host_key_is_refused() {
    if !lab_up() {
        return;
    }
    let _lab = lab_lock_nodes(1..=3);
    let dir = tempfile::tempdir().unwrap();
    let key = dir.path().join("k");
    let ok = std::process::Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-f"])
        .arg(&key)
        .status()
        .unwrap();
    assert!(ok.success());
    let pubkey = std::fs::read_to_string(dir.path().join("k.pub")).unwrap();
    let mut w = pubkey.split(' ');
    let kh = dir.path().join("known_hosts");
    std::fs::write(&kh, format!("# other\nkdnode1,{} {} {}\n", addr(1), w.next().unwrap(), w.next().unwrap())).unwrap();
    for policy in [HostKeyPolicy::Strict(kh.clone()), HostKeyPolicy::AcceptNew(kh.clone())] {
        let mut opts = lab_options();
        opts.host_keys = policy;
        let err = SshHost::connect("kdnode1", &addr(1), &opts).await.err().expect("must refuse");
        match &err {
            Error::HostKeyChanged { host, file, line } => {
                assert_eq!((host.as_str(), file, *line), ("kdnode1", &kh, 2));
            }
            other => panic!("expected HostKeyChanged, got {other}"),
        }
        let msg = err.to_string();
        assert!(msg.contains("HOST KEY CHANGED") && msg.contains(&format!("{}:2", kh.display())), "{msg}");
    }
    // accept-new never overwrites a known key
    assert_eq!(std::fs::read_to_string(&kh).unwrap().lines().count(), 2);
}

#[tokio::test(flavor = "multi_thread")]
async fn connect_all_reports_each_node() {
    if !lab_up() {
        return;
    }
    let _lab = lab_lock_nodes(1..=3);
    let mut targets: Vec<NodeTarget> =
        (1..=3).map(|i| NodeTarget { name: format!("kdnode{i}"), address: addr(i), options: lab_options() }).collect();
    // a closed port on a lab node, and a lab address where nothing answers
    let dir = tempfile::tempdir().unwrap();
    let mut closed = lab_options();
    closed.port = 2222;
    closed.host_keys = HostKeyPolicy::AcceptNew(dir.path().join("known_hosts"));
    targets.push(NodeTarget { name: "closed-port".into(), address: addr(1), options: closed.clone() });
    let mut silent = closed;
    silent.port = 22;
    silent.connect_timeout = Duration::from_secs(2);
    // (no key is known for .99 either: accept-new into a scratch file, so a connect is really tried)
    targets.push(NodeTarget { name: "nobody".into(), address: "10.77.0.99".into(), options: silent });
    let start = Instant::now();
    let res = connect_all(&targets, 2).await;
    assert_eq!(res.len(), 5);
    for (i, r) in res.iter().take(3).enumerate() {
        let h = r.as_ref().unwrap();
        assert_eq!(h.name(), format!("kdnode{}", i + 1));
        assert_eq!(h.exec("hostname", None).await.unwrap().stdout_str(), format!("kdnode{}\n", i + 1));
    }
    let e = res[3].as_ref().err().unwrap();
    assert!(matches!(e, Error::Unreachable { .. }), "{e}");
    assert!(e.to_string().starts_with("closed-port:"), "{e}");
    let e = res[4].as_ref().err().unwrap();
    assert!(matches!(e, Error::ConnectTimeout { .. } | Error::Unreachable { .. }), "{e}");
    assert!(e.to_string().starts_with("nobody:"), "{e}");
    eprintln!("connect_all: {:?} for 5 targets; errors: [{}] [{}]", start.elapsed(), res[3].as_ref().err().unwrap(), e);
    for r in res.into_iter().flatten() {
        r.close().await.unwrap();
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn jump_host_carries_the_connection() {
    if !lab_up() {
        return;
    }
    let _lab = lab_lock_nodes(1..=3);
    // kdnode1 is the bastion for kdnode2 and kdnode3
    let mut opts = lab_options();
    opts.jump = Some(format!("root@{}:22", addr(1)).parse().unwrap());
    let target =
        |i: u32, o: &SshOptions| NodeTarget { name: format!("kdnode{i}"), address: addr(i), options: o.clone() };
    let res = connect_all(&[target(2, &opts), target(3, &opts)], 2).await;
    for (r, i) in res.into_iter().zip(2..) {
        let h = r.unwrap_or_else(|e| panic!("kdnode{i} through kdnode1: {e}"));
        // the node's sshd sees the connection come from the bastion, not from the deployer
        let conn = h.exec("echo $SSH_CONNECTION", None).await.unwrap().stdout_str();
        assert_eq!(conn.split(' ').next(), Some(addr(1).as_str()), "kdnode{i}: {conn}");
        assert_eq!(h.exec("hostname", None).await.unwrap().stdout_str(), format!("kdnode{i}\n"));
        h.close().await.unwrap();
    }

    // a node first seen through the bastion: its key is learned (accept-new) and is its real key
    let dir = tempfile::tempdir().unwrap();
    let kh = dir.path().join("known_hosts");
    let lab = std::fs::read_to_string(lab_dir().join("known_hosts")).unwrap();
    let only = |n: &str| lab.lines().filter(|l| l.starts_with(&format!("{n},"))).collect::<Vec<_>>().join("\n") + "\n";
    std::fs::write(&kh, only("kdnode1")).unwrap();
    let mut strict = opts.clone();
    strict.host_keys = HostKeyPolicy::Strict(kh.clone());
    let e = connect_all(&[target(2, &strict)], 1).await.remove(0).err().expect("unknown node behind the bastion");
    assert!(matches!(e, Error::HostKeyUnknown { .. }), "{e}");
    let mut accept = opts.clone();
    accept.host_keys = HostKeyPolicy::AcceptNew(kh.clone());
    let h = connect_all(&[target(2, &accept)], 1).await.remove(0).unwrap();
    h.close().await.unwrap();
    let key2 = only("kdnode2");
    let key2 = key2.split(' ').nth(2).unwrap();
    assert!(std::fs::read_to_string(&kh).unwrap().contains(key2), "learned key must be kdnode2's");

    // a bastion that does not answer: every node behind it is unreachable, and says why
    let mut dead = opts.clone();
    dead.jump = Some(format!("root@{}:2222", addr(1)).parse().unwrap());
    for r in connect_all(&[target(2, &dead), target(3, &dead)], 2).await {
        let e = r.err().expect("no bastion, no node");
        assert!(matches!(e, Error::Through { .. }), "{e}");
        assert!(e.to_string().contains("jump host root@10.77.0.11:2222"), "{e}");
    }
}

/// A bulk upload (a node's binaries) runs on a connection of its own that
/// is closed after, directly and through a bastion: the bytes arrive
/// whole, and the node's connection is still the one it was.
#[tokio::test(flavor = "multi_thread")]
async fn a_bulk_upload_runs_on_a_connection_of_its_own() {
    if !lab_up() {
        return;
    }
    let _lab = lab_lock_nodes(1..=3);
    let mut via = lab_options();
    via.jump = Some(format!("root@{}:22", addr(1)).parse().unwrap());
    let direct = connect(1).await;
    let behind = SshHost::connect_via("kdnode2", &addr(2), &via, &direct).await.unwrap();
    for h in [&direct, &behind] {
        let own = h.exec("echo $SSH_CONNECTION", None).await.unwrap().stdout_str();
        let data = random(3 << 20);
        let mut src = &data[..];
        let cmd = "cat > /tmp/bulk-test && echo $SSH_CONNECTION && sha256sum < /tmp/bulk-test && rm /tmp/bulk-test";
        let out = h.upload_bulk(cmd, &mut src).await.unwrap();
        let text = out.stdout_str();
        let (bulk, sum) = text.split_once('\n').unwrap();
        assert_eq!(out.status, 0, "{}: {text}", h.name());
        assert!(sum.starts_with(&support::node::blob(data.clone()).sha), "{}: bytes altered", h.name());
        assert_ne!(bulk, own.trim(), "{}: the bulk upload ran on the node's own connection", h.name());
        assert_eq!(bulk.split(' ').next(), own.split(' ').next(), "{}: not the same way in", h.name());
        // the extra connection is closed once the upload is done
        let port = bulk.split(' ').nth(1).unwrap();
        let open = format!("ss -Htn state established '( sport = :22 and dport = :{port} )'");
        let mut left = String::new();
        for _ in 0..40 {
            left = h.exec(&open, None).await.unwrap().stdout_str();
            if left.is_empty() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert_eq!(left, "", "{}: the bulk connection was left open", h.name());
        assert_eq!(h.exec("echo $SSH_CONNECTION", None).await.unwrap().stdout_str(), own);
    }
    behind.close().await.unwrap();
    direct.close().await.unwrap();
}

/// A bulk upload's connection made ahead (`expect_bulk`, beside the
/// commands before the upload) is there before the upload, carries it and
/// is closed after it; one never used is closed with the node's own.
#[tokio::test(flavor = "multi_thread")]
async fn a_bulk_connection_made_ahead_carries_the_upload_or_closes_with_the_host() {
    if !lab_up() {
        return;
    }
    let _lab = lab_lock_nodes(1..=3);
    let watcher = connect(3).await;
    let count = || async {
        let out = watcher.exec("ss -Htn state established '( sport = :22 )' | wc -l", None).await.unwrap();
        out.stdout_str().trim().parse::<usize>().unwrap()
    };
    let until = |want: usize, what: &'static str| {
        let count = &count;
        async move {
            for _ in 0..60 {
                if count().await == want {
                    return;
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            panic!("{what}: {} connections, not {want}", count().await);
        }
    };
    let alone = count().await;
    let h = connect(3).await;
    let own = h.exec("echo $SSH_CONNECTION", None).await.unwrap().stdout_str();
    h.expect_bulk();
    h.expect_bulk();
    until(alone + 2, "made ahead, once").await;
    let data = random(2 << 20);
    let out = h.upload_bulk("cat > /dev/null && echo $SSH_CONNECTION", &mut &data[..]).await.unwrap();
    assert_eq!(out.status, 0);
    assert_ne!(out.stdout_str(), own, "the upload ran on the node's own connection");
    until(alone + 1, "the bulk connection after its upload").await;
    // made ahead, never used: gone with the host
    h.expect_bulk();
    until(alone + 2, "made ahead again").await;
    h.close().await.unwrap();
    until(alone, "after the host closed").await;
    watcher.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn measurements() {
    if !lab_up() {
        return;
    }
    let _lab = lab_lock_nodes(1..=3);
    let opts: SshOptions = lab_options();
    let n = 5;
    let t = Instant::now();
    for _ in 0..n {
        SshHost::connect("kdnode1", &addr(1), &opts).await.unwrap().close().await.unwrap();
    }
    let connect_time = t.elapsed() / n;
    let h = connect(1).await;
    h.exec("true", None).await.unwrap();
    // the fastest of 50: Nagle's algorithm with delayed ACKs holds every
    // one of them 40 ms, a busy machine only some
    let mut rtt = Duration::MAX;
    for _ in 0..50 {
        let t = Instant::now();
        assert!(h.exec("true", None).await.unwrap().success());
        rtt = rtt.min(t.elapsed());
    }
    let size = 100usize << 20;
    let data = random(size);
    let t = Instant::now();
    let mut src = &data[..];
    let out = h.upload("cat > /dev/null", &mut src).await.unwrap();
    assert!(out.success());
    let secs = t.elapsed().as_secs_f64();
    let mib_s = size as f64 / (1 << 20) as f64 / secs;
    eprintln!(
        "MEASURED kdnode1: connect+auth {connect_time:?}, exec round trip (fastest of 50) {rtt:?}, upload 100 MiB {secs:.2} s = {mib_s:.0} MiB/s"
    );
    assert!(rtt < Duration::from_millis(40), "round trip {rtt:?}: is TCP_NODELAY on?");
    // the real path: node program `put` (temp file, sha256 check, rename)
    let node = kdeploy::node::Node::install(&h).await.unwrap();
    let _lock = support::node::hold(&node, "transport-test").await;
    let n = 20;
    let t = Instant::now();
    for _ in 0..n {
        node.status().await.unwrap();
    }
    let status_rtt = t.elapsed() / n;
    let b = support::node::blob(data);
    let t = Instant::now();
    node.put_bytes(&b.b3, &b.sha, &b.bytes).await.unwrap();
    let secs = t.elapsed().as_secs_f64();
    h.exec(&format!("rm -f /var/lib/kdeploy/store/{}", b.b3), None).await.unwrap();
    eprintln!(
        "MEASURED kdnode1: node `status` round trip {status_rtt:?}; `put` of 100 MiB with sha256 check {secs:.2} s = {:.0} MiB/s",
        100.0 / secs
    );
    h.close().await.unwrap();
}
