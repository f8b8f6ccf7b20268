//! The connection keeper (`--persist`) against real lab nodes and their
//! sshd: commands on a kept connection behave as on a run's own (binary
//! stdin and stdout, status, stderr), a second run gets the same
//! connection, a run that goes away ends its commands' stdin (how a node's
//! lock is let go of), a known_hosts that no longer names the node's key
//! refuses the kept connection, a connection unused for the persist time
//! is closed while others keep the keeper busy, the keeper exits once
//! unused; and through
//! the CLI, a deployer killed mid-run with its connections kept leaves no
//! node locked, and the next run finishes the job.

use crate::support;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use kdeploy::transport::keeper::{self, wire, KeptHost};
use kdeploy::transport::{Error, Host, HostKeyPolicy, NodeTarget, SshHost};
use support::node::lab_check::assert_deployed;
use support::node::lab_project::*;
use support::node::{addr, lab_lock_any, lab_lock_nodes, lab_options, lab_up, lane};

type Serving = tokio::task::JoinHandle<std::io::Result<()>>;

/// A keeper of this test's own, serving on a socket in `dir`.
fn start_keeper(dir: &Path, persist: Duration) -> (PathBuf, Serving) {
    let socket = dir.join("keeper.sock");
    let s = socket.clone();
    (socket, tokio::spawn(async move { keeper::serve(&s, persist).await }))
}

async fn wait_listening(socket: &Path) {
    let t0 = Instant::now();
    while tokio::net::UnixStream::connect(socket).await.is_err() {
        assert!(t0.elapsed() < Duration::from_secs(5), "the keeper did not listen");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// With the lab's node 1 taken: a keeper listening in a directory of the
/// test's own. `None` without a lab.
async fn keeper_on_node_1(persist: Duration) -> Option<(support::node::LabGuard, tempfile::TempDir, PathBuf, Serving)> {
    if !lab_up() {
        return None;
    }
    let lab = lab_lock_nodes(1..=1);
    let dir = tempfile::tempdir().unwrap();
    let (socket, serving) = start_keeper(dir.path(), persist);
    wait_listening(&socket).await;
    Some((lab, dir, socket, serving))
}

fn target(i: u32, known_hosts: Option<&Path>) -> NodeTarget {
    let mut options = lab_options();
    if let Some(kh) = known_hosts {
        options.host_keys = HostKeyPolicy::Strict(kh.to_path_buf());
    }
    NodeTarget { name: format!("kdnode{}", lane::node(i)), address: addr(i), options }
}

async fn kept(socket: &Path, t: &NodeTarget) -> Result<KeptHost, Error> {
    KeptHost::connect(socket, t).await.expect("the lab's key file can go through a keeper")
}

/// The client side (address and port) of the SSH connection a command runs on.
async fn connection_of(h: &dyn Host) -> String {
    let out = h.exec("echo $SSH_CONNECTION", None).await.unwrap();
    out.stdout_str().split(' ').take(2).collect::<Vec<_>>().join(" ")
}

#[tokio::test(flavor = "multi_thread")]
async fn a_kept_connection_runs_commands_as_the_runs_own_and_serves_the_next_run() {
    let Some((_lab, _dir, socket, _keeper)) = keeper_on_node_1(Duration::from_secs(60)).await else { return };
    let h = kept(&socket, &target(1, None)).await.unwrap();
    let mut data = vec![0u8; 3 << 20];
    std::fs::File::open("/dev/urandom").unwrap().read_exact(&mut data).unwrap();
    let out = h.exec("cat", Some(&data)).await.unwrap();
    assert!(out.success() && out.stdout == data, "3 MiB of random bytes came back altered");
    let out = h.exec("printf 'out\\0\\377'; echo err >&2; exit 7", None).await.unwrap();
    assert_eq!((out.status, out.stdout.as_slice(), out.stderr.as_slice()), (7, &b"out\0\xff"[..], &b"err\n"[..]));
    let first = connection_of(&h).await;
    h.close().await.unwrap();
    // the next run: the same connection, not a new one
    let again = kept(&socket, &target(1, None)).await.unwrap();
    assert_eq!(connection_of(&again).await, first, "the second run did not get the kept connection");
    // a run's own connection is another
    let own = support::node::connect(1).await;
    assert_ne!(connection_of(&own).await, first);
    own.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_run_that_goes_away_ends_its_commands_stdin() {
    let Some((_lab, _dir, socket, _keeper)) = keeper_on_node_1(Duration::from_secs(60)).await else { return };
    let own = support::node::connect(1).await;
    let mark = format!("/tmp/kdeploy-keeper-test-{}", std::process::id());
    own.exec(&format!("rm -f {mark}.*"), None).await.unwrap();
    let t = wire::Target::of(&target(1, None)).unwrap();
    // a run killed after its command started (socket closed without the
    // stdin's end), and one that sends a frame longer than allowed
    for (k, hostile) in [(1, false), (2, true)] {
        let mut s = tokio::net::UnixStream::connect(&socket).await.unwrap();
        let command = format!("cat >/dev/null; touch {mark}.{k}");
        wire::write_request(&mut s, &wire::Request::Spawn { target: t.clone(), command }).await.unwrap();
        wire::read_answer(&mut s, "kdnode1").await.unwrap();
        wire::write_frame(&mut s, wire::STDIN, b"some input").await.unwrap();
        if hostile {
            use tokio::io::AsyncWriteExt;
            s.write_all(&[wire::STDIN, 0xff, 0xff, 0xff, 0xff]).await.unwrap();
            // (the keeper ends it at once, not when the run closes)
            appears(&own, &format!("{mark}.{k}"), "a hostile frame did not end the command's stdin").await;
        }
        drop(s);
        appears(&own, &format!("{mark}.{k}"), &format!("run {k}: the command's stdin did not end")).await;
    }
    own.exec(&format!("rm -f {mark}.*"), None).await.unwrap();
    own.close().await.unwrap();
}

/// Drops this machine's packets from a local port while it lives.
struct Dropped(String);

impl Dropped {
    fn new(port: &str) -> Dropped {
        let rule = format!("OUTPUT -p tcp --sport {port} -j DROP");
        let ok = std::process::Command::new("sh").arg("-c").arg(format!("iptables -I {rule}")).status().unwrap();
        assert!(ok.success(), "iptables -I {rule}");
        Dropped(rule)
    }
}

impl Drop for Dropped {
    fn drop(&mut self) {
        let _ = std::process::Command::new("sh").arg("-c").arg(format!("iptables -D {}", self.0)).status();
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_kept_connection_that_died_is_replaced() {
    let Some((_lab, _dir, socket, _keeper)) = keeper_on_node_1(Duration::from_secs(60)).await else { return };
    let own = support::node::connect(1).await;
    for how in ["closed by the node", "silent"] {
        let before = connection_of(&kept(&socket, &target(1, None)).await.unwrap()).await;
        let port = before.split(' ').nth(1).unwrap().to_string();
        // a node that ends the connection (its sshd killed), or one that
        // stops answering on it (rebooted, cut off: the packets go nowhere)
        let _cut = if how == "silent" {
            Some(Dropped::new(&port))
        } else {
            let kill = format!(
                "kill $(ss -Htnp state established '( sport = :22 and dport = :{port} )' | grep -o 'pid=[0-9]*' | cut -d= -f2)"
            );
            assert!(own.exec(&kill, None).await.unwrap().success(), "could not end the kept connection");
            None
        };
        tokio::time::sleep(Duration::from_millis(300)).await;
        let after = connection_of(&kept(&socket, &target(1, None)).await.unwrap()).await;
        assert!(!after.is_empty() && after != before, "{how}: still the dead connection ({before} -> {after})");
    }
    own.close().await.unwrap();
}

/// Wait (10 s at most) for `path` to exist on the node.
async fn appears(h: &SshHost, path: &str, what: &str) {
    let t0 = Instant::now();
    while !h.exec(&format!("test -e {path}"), None).await.unwrap().success() {
        assert!(t0.elapsed() < Duration::from_secs(10), "{what}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_known_hosts_that_no_longer_names_the_key_refuses_the_kept_connection() {
    let Some((_lab, dir, socket, _keeper)) = keeper_on_node_1(Duration::from_secs(60)).await else { return };
    let kh = dir.path().join("known_hosts");
    let lab_kh = std::fs::read_to_string(support::node::lab_dir().join("known_hosts")).unwrap();
    std::fs::write(&kh, &lab_kh).unwrap();
    kept(&socket, &target(1, Some(&kh))).await.unwrap();
    // the node's line now holds another key: as if the node had been replaced
    let key = dir.path().join("other");
    let made = std::process::Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-f"])
        .arg(&key)
        .status()
        .unwrap();
    assert!(made.success());
    let other = std::fs::read_to_string(key.with_extension("pub")).unwrap();
    let other: Vec<&str> = other.split(' ').take(2).collect();
    std::fs::write(&kh, format!("kdnode{},{} {} {}\n", lane::node(1), addr(1), other[0], other[1])).unwrap();
    match kept(&socket, &target(1, Some(&kh))).await {
        Err(Error::HostKeyChanged { file, line, .. }) => assert_eq!((file, line), (kh.clone(), 1)),
        Err(e) => panic!("expected HostKeyChanged, got {e}"),
        Ok(_) => panic!("the kept connection was used although known_hosts names another key"),
    }
    // and with the file as it was, the node is reached again
    std::fs::write(&kh, &lab_kh).unwrap();
    let h = kept(&socket, &target(1, Some(&kh))).await.unwrap();
    assert!(h.exec("true", None).await.unwrap().success());
}

#[tokio::test(flavor = "multi_thread")]
async fn the_keeper_exits_once_unused_and_takes_its_socket() {
    let Some((_lab, dir, socket, keeper)) = keeper_on_node_1(Duration::from_secs(1)).await else { return };
    let h = kept(&socket, &target(1, None)).await.unwrap();
    // a command running longer than the idle time keeps it
    assert!(h.exec("sleep 2", None).await.unwrap().success());
    assert!(h.exec("true", None).await.unwrap().success(), "the keeper left while a command ran");
    let done = tokio::time::timeout(Duration::from_secs(10), keeper).await;
    assert!(matches!(done, Ok(Ok(Ok(())))), "the keeper did not exit once unused: {done:?}");
    assert!(!socket.exists(), "the keeper left its socket behind");
    // a second keeper on a socket whose lock is held leaves at once
    let (_, first) = start_keeper(dir.path(), Duration::from_secs(60));
    wait_listening(&socket).await;
    let (_, second) = start_keeper(dir.path(), Duration::from_secs(60));
    let second = tokio::time::timeout(Duration::from_secs(5), second).await;
    assert!(matches!(second, Ok(Ok(Ok(())))), "a second keeper on the same socket: {second:?}");
    assert!(kept(&socket, &target(1, None)).await.is_ok(), "the first keeper stopped serving");
    first.abort();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_connection_unused_for_the_persist_time_is_closed_while_others_keep_the_keeper_busy() {
    let Some((_lab, dir, socket, _keeper)) = keeper_on_node_1(Duration::from_secs(2)).await else { return };
    // two runs' settings (another known_hosts file: another kept connection)
    let kh = dir.path().join("known_hosts");
    std::fs::copy(support::node::lab_dir().join("known_hosts"), &kh).unwrap();
    let idle = connection_of(&kept(&socket, &target(1, None)).await.unwrap()).await;
    let busy = connection_of(&kept(&socket, &target(1, Some(&kh))).await.unwrap()).await;
    assert_ne!(idle, busy);
    // the second one used every half second for 4 s: the keeper stays
    for _ in 0..8 {
        tokio::time::sleep(Duration::from_millis(500)).await;
        let now = connection_of(&kept(&socket, &target(1, Some(&kh))).await.unwrap()).await;
        assert_eq!(now, busy, "a connection in use was not kept");
    }
    let port = idle.split(' ').nth(1).unwrap();
    let own = support::node::connect(1).await;
    let open =
        own.exec(&format!("ss -Htn state established '( sport = :22 and dport = :{port} )'"), None).await.unwrap();
    assert!(
        open.stdout_str().trim().is_empty(),
        "a connection unused for 4 s (persist 2 s) is still open: {}",
        open.stdout_str()
    );
    own.close().await.unwrap();
    let again = connection_of(&kept(&socket, &target(1, None)).await.unwrap()).await;
    assert!(!again.is_empty() && again != idle, "the closed connection was handed out again");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_keeper_that_goes_away_mid_command_is_said_so() {
    if !lab_up() {
        return;
    }
    let _lab = lab_lock_nodes(1..=1);
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("keeper.sock");
    let mut keeper = std::process::Command::new(env!("CARGO_BIN_EXE_kdeploy"))
        .args(["keeper", "--persist", "60", "--socket"])
        .arg(&socket)
        .spawn()
        .unwrap();
    wait_listening(&socket).await;
    let h = kept(&socket, &target(1, None)).await.unwrap();
    let running = tokio::spawn(async move { h.exec("sleep 5", None).await });
    tokio::time::sleep(Duration::from_millis(1000)).await;
    keeper.kill().unwrap();
    keeper.wait().unwrap();
    let out =
        tokio::time::timeout(Duration::from_secs(4), running).await.expect("the run still waits").unwrap().unwrap();
    assert_eq!(out.status, 255);
    assert!(String::from_utf8_lossy(&out.stderr).contains("keeper"), "{}", String::from_utf8_lossy(&out.stderr));
}

fn lock_free_inside(i: u32) -> bool {
    inside(i, "flock -n /var/lib/kdeploy/lock true").status.success()
}

/// The keeper processes listening in `runtime` (a test's own
/// XDG_RUNTIME_DIR: every other run of this binary, other tests' included,
/// shares the keeper in the machine's, which this test must not end).
fn keepers(runtime: &Path) -> Vec<u32> {
    let pattern = format!(" keeper --socket {}/kdeploy/", runtime.display());
    let out = std::process::Command::new("pgrep").args(["-f", &pattern]).output().unwrap();
    String::from_utf8_lossy(&out.stdout).lines().filter_map(|l| l.trim().parse().ok()).collect()
}

#[test]
fn a_deployer_killed_with_its_connections_kept_leaves_no_node_locked() {
    let _g = lab_lock_any();
    if !lab_up() {
        return;
    }
    let p = Project::new();
    let runtime = tempfile::tempdir().unwrap();
    let kd = |cluster: &Path| {
        let mut c = kdeploy_cmd("switch", cluster, None, &["--persist", "20"]);
        c.env("XDG_RUNTIME_DIR", runtime.path());
        c
    };
    let (out, _) = run(kd(&p.base()));
    assert!(out.status.success(), "first run\n{}", text(&out));
    let pids = keepers(runtime.path());
    assert_eq!(pids.len(), 1, "one keeper after a run given --persist: {pids:?}");
    let b = p.variant("b", "containerd.maxContainerLogLineSize = 20500;");
    let mut c = kd(&b);
    c.env("KDEPLOY_FAILPOINT", "after-push");
    let (out, _) = run(c);
    assert_eq!(out.status.code(), None, "the deployer must die by a signal\n{}", text(&out));
    // its locks were held through the keeper's connections, which live on
    let t0 = Instant::now();
    while !(1..=3).all(lock_free_inside) {
        assert!(t0.elapsed() < Duration::from_secs(5), "a node is still locked by the killed deployer");
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(keepers(runtime.path()), pids, "the keeper went with the deployer");
    let (out, _) = run(kd(&b));
    assert!(out.status.success(), "next run\n{}", text(&out));
    assert_deployed(&b);
    let (out, j) = run(kd(&b));
    assert!(out.status.success(), "re-run\n{}", text(&out));
    let unchanged = j["nodes"].as_object().is_some_and(|m| m.values().all(|n| n["status"] == "unchanged"));
    assert!(unchanged, "the re-run through kept connections must be a no-op\n{}", text(&out));
    p.restore();
    for pid in pids {
        drop(support::KillOnDrop(pid));
    }
}
