//! The node lock's token against a directory on this machine
//! (`KDEPLOY_PREFIX`, through `LocalHost`): a run whose lock was let go of
//! (as the node's lock shell does after 30 s without a heartbeat: the
//! deployer paused, a laptop asleep) and then taken by another run
//! changes nothing any more — every command that changes the node is
//! refused, with the lock's new holder named — while the new holder's
//! commands go through; a takeover waits for the commands the old holder
//! still has running; the deployer's guard notices a lock process that
//! ended without being released. The same through `kdeploy switch` on
//! real nodes is in `tests/lab/crash.rs`.

use crate::support;
use std::path::Path;
use std::time::{Duration, Instant};

use kdeploy::node::{Node, NodeError, WantedBlob};
use kdeploy::store::Digest;
use kdeploy::transport::{Host, LocalHost};
use support::node::{blob, file, manifest, push, record, wanted};

/// A node that is a scratch directory: the directory, it as a prefix, the host.
fn scratch() -> (tempfile::TempDir, String, LocalHost) {
    let dir = tempfile::tempdir().unwrap();
    let prefix = dir.path().to_str().unwrap().to_string();
    (dir, prefix, LocalHost::new("local"))
}

/// [`scratch`] whose takeovers wait 1 s for an earlier run's commands
/// (not 40 s) before they give up.
fn scratch_draining_fast() -> (tempfile::TempDir, String, LocalHost) {
    let (dir, prefix, host) = scratch();
    (dir, prefix, host.with_env("KDEPLOY_TEST_DRAIN_WAIT", "1"))
}

fn lost(what: &str, r: Result<(), NodeError>) {
    let e = r.expect_err(what);
    let text = e.to_string();
    assert!(text.contains("does not hold the node's lock any more"), "{what}: {text}");
    assert!(text.contains("second-run"), "{what}: the holder is named: {text}");
    assert!(matches!(e, NodeError::LockLost { .. }), "{what}: {e:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_run_that_lost_its_lock_changes_nothing() {
    let (dir, prefix, host) = scratch();
    let first = Node::install_with_prefix(&host, &prefix).await.unwrap();
    let lock = first.lock("first-run").await.unwrap();
    let (one, two) = (blob("one\n"), blob("two\n"));
    push(&first, &[&one]).await;
    let m1 = manifest(vec![file("/etc/t/a.conf", "0644", &one)]);
    first.stage(1, "files", &m1).await.unwrap();
    // the first run's lock shell lets go (30 s without a beat), a second
    // run takes the lock and stages its own generation
    lock.release().await;
    let second = Node::install_with_prefix(&host, &prefix).await.unwrap();
    let held = second.lock("second-run").await.unwrap();
    push(&second, &[&two]).await;
    let m2 = manifest(vec![file("/etc/t/a.conf", "0644", &two)]);
    second.stage(2, "files", &m2).await.unwrap();

    // the first run resumes: nothing it does changes the node
    let secret = Digest([7; 32]);
    lost("switch", first.switch(Some(1), "files").await);
    lost("switch none", first.switch(None, "files").await);
    lost("stage", first.stage(3, "files", &m1).await);
    lost("commit", first.commit(1, &Digest([1; 32]), None).await);
    lost("have", first.missing(&[wanted(&one)]).await.map(|_| ()));
    lost("put", first.put_bytes(&one.b3, &one.sha, &one.bytes).await);
    lost("put-secrets", first.put_secrets(&[(secret, b"key".as_slice())]).await);
    lost("gc", first.gc(&[1], false).await.map(|_| ()));
    lost("units", first.units(&["stop:nothing.service".into()]).await);
    lost("hook", first.exec_held(&format!("touch {}/hook-ran", dir.path().display())).await.map(|_| ()));
    lost("forget", first.forget().await.map(|_| ()));
    let root = dir.path().join("var/lib/kdeploy");
    assert!(!dir.path().join("etc/t/a.conf").exists(), "nothing linked");
    assert!(!dir.path().join("hook-ran").exists(), "the hook never ran");
    assert!(!root.join("generations/3").exists(), "nothing staged");
    assert!(!root.join("current").exists(), "nothing committed");
    assert!(root.join("generations/1/files/.complete").exists(), "gc removed nothing");
    assert!(root.join(format!("store/{}", two.b3.hex())).exists(), "the second run's blob is there");

    // the holder's own commands go through
    second.switch(Some(2), "files").await.unwrap();
    second.commit(2, &Digest([2; 32]), Some(&record("files", Digest([3; 32]), 2))).await.unwrap();
    assert_eq!(std::fs::read_to_string(dir.path().join("etc/t/a.conf")).unwrap(), "two\n");
    assert!(!held.is_lost());
    held.release().await;
    // and once it let go, not even its own (it no longer holds the lock)
    let r = second.switch(Some(1), "files").await;
    assert!(matches!(r, Err(NodeError::LockLost { .. })), "{r:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_command_without_the_token_is_refused() {
    let (_dir, prefix, host) = scratch();
    let node = Node::install_with_prefix(&host, &prefix).await.unwrap();
    let _lock = node.lock("a-run").await.unwrap();
    // the node program itself, as someone would call it by hand
    let zero = "0".repeat(64);
    for args in [vec!["commit", "1", zero.as_str()], vec!["switch", "none", "files"], vec!["gc"]] {
        let out = host.exec(&node.command(&args), Some(b"")).await.unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status, 1, "{args:?}: {err}");
        assert!(err.contains("only the holder of the node lock may run this"), "{args:?}: {err}");
    }
    // a token that is not the holder's: exit 77, the typed refusal
    let cmd = node.command(&["--held", &"ab".repeat(16), "switch", "none", "files"]);
    let out = host.exec(&cmd, None).await.unwrap();
    assert_eq!(out.status, 77, "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).starts_with("kdeploy-node-error lock-lost a-run pid="));
}

/// A run paused in the middle of a hook left the hook running on the
/// node; the run that takes the lock over starts only once it is done.
#[tokio::test(flavor = "multi_thread")]
async fn a_takeover_waits_for_the_commands_of_the_run_it_takes_over_from() {
    let (dir, prefix, host) = scratch();
    let first = Node::install_with_prefix(&host, &prefix).await.unwrap();
    let lock = first.lock("first-run").await.unwrap();
    let done = dir.path().join("hook-done");
    let script = format!("sleep 3; touch {}", done.display());
    let hook = first.exec_held(&script);
    let takeover = async {
        tokio::time::sleep(Duration::from_millis(500)).await;
        lock.release().await;
        let second = Node::install_with_prefix(&host, &prefix).await.unwrap();
        let t0 = Instant::now();
        let held = second.lock("second-run").await.unwrap();
        let waited = t0.elapsed();
        assert!(done.exists(), "the second run took the lock while the first's hook ran (after {waited:?})");
        held.release().await;
        waited
    };
    let (out, waited) = tokio::join!(hook, takeover);
    assert!(out.unwrap().success());
    assert!(waited >= Duration::from_secs(1), "{waited:?}");
}

/// The deployer's guard notices when the node's lock process ends
/// without being released (here: killed), before any command is refused.
#[tokio::test(flavor = "multi_thread")]
async fn the_guard_notices_a_lock_process_that_ended() {
    let (dir, prefix, host) = scratch();
    let node = Node::install_with_prefix(&host, &prefix).await.unwrap();
    let lock = node.lock("a-run").await.unwrap();
    assert!(!lock.is_lost());
    let pid = holder_pid(&dir.path().join("var/lib/kdeploy/lock.token"));
    assert!(std::process::Command::new("kill").args(["-9", &pid]).status().unwrap().success());
    let t0 = Instant::now();
    while !lock.is_lost() {
        assert!(t0.elapsed() < Duration::from_secs(15), "the lock process ended unnoticed");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let r = node.missing(&[WantedBlob { hash: Digest([3; 32]), size: 1, sha256: None }]).await;
    assert!(matches!(r, Err(NodeError::LockLost { .. })), "{r:?}");
}

/// The pid of the lock's holder, from `lock.token` (`TOKEN PID`).
fn holder_pid(token_file: &Path) -> String {
    token_line(token_file).1
}

/// `lock.token`'s token and pid.
fn token_line(token_file: &Path) -> (String, String) {
    let text = std::fs::read_to_string(token_file).unwrap();
    let mut words = text.split_whitespace().map(str::to_string);
    (words.next().unwrap(), words.next().unwrap())
}

/// A takeover that gives up waiting for a command of the earlier run
/// (here a process holding `lock.busy` shared, as a node command does
/// while it runs) is refused as locked, names that command, and leaves
/// the lock free for the next try.
#[tokio::test(flavor = "multi_thread")]
async fn a_takeover_that_gives_up_names_the_command_it_waited_for() {
    let (dir, prefix, host) = scratch_draining_fast();
    let node = Node::install_with_prefix(&host, &prefix).await.unwrap();
    let busy = dir.path().join("var/lib/kdeploy/lock.busy");
    // (the process itself holds it, as a node command's shell does)
    let mut holder = std::process::Command::new("sh")
        .args(["-c", r#"exec 8>>"$1" && flock -s 8 && exec sleep 31"#, "-", busy.to_str().unwrap()])
        .spawn()
        .unwrap();
    let _kill = support::KillOnDrop(holder.id());
    let t0 = Instant::now();
    while std::process::Command::new("flock").args(["-n", busy.to_str().unwrap(), "true"]).status().unwrap().success() {
        assert!(t0.elapsed() < Duration::from_secs(10), "the holder never took lock.busy");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let Err(e) = node.lock("second-run").await else { panic!("taken while a command of the earlier run still runs") };
    let text = e.to_string();
    assert!(matches!(e, NodeError::Locked { .. }), "{e:?}");
    assert!(text.contains("is still running"), "{text}");
    assert!(text.contains(&format!("still running: {} sleep 31)", holder.id())), "names the command: {text}");
    holder.kill().unwrap();
    holder.wait().unwrap();
    let held = node.lock("second-run").await.expect("the lock once the command ended");
    held.release().await;
}

/// A deployer paused between starting a commit and sending its phase
/// record does not hold up the run that takes its lock over (the commit
/// waits for its input before it counts as running), and the record it
/// sends on waking commits nothing.
#[tokio::test(flavor = "multi_thread")]
async fn a_commit_waiting_for_its_input_does_not_hold_up_a_takeover() {
    let (dir, prefix, host) = scratch_draining_fast();
    let first = Node::install_with_prefix(&host, &prefix).await.unwrap();
    let lock = first.lock("first-run").await.unwrap();
    let token_file = dir.path().join("var/lib/kdeploy/lock.token");
    let (token, _) = token_line(&token_file);
    let zero = "0".repeat(64);
    let mut commit = host.spawn(&first.command(&["--held", &token, "commit", "1", &zero])).await.unwrap();
    let stdin = commit.stdin.take().expect("stdin");
    tokio::time::sleep(Duration::from_millis(500)).await;
    lock.release().await;
    let second = Node::install_with_prefix(&host, &prefix).await.unwrap();
    let held = second.lock("second-run").await.expect("taken over while the commit waits for its input");
    stdin.send(bytes::Bytes::from_static(b"files\tabc\t1\t1\n")).await.unwrap();
    drop(stdin);
    let out = commit.wait().await;
    assert_eq!(out.status, 77, "{}", String::from_utf8_lossy(&out.stderr));
    assert!(!dir.path().join("var/lib/kdeploy/current").exists(), "committed after the lock was lost");
    held.release().await;
}
