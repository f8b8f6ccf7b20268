//! Staging without a second copy where the node's file system allows it:
//! on XFS made with reflink=1 (RHEL's default; btrfs shares extents the
//! same way) a staged file shares the store blob's extents, so a 32 MiB
//! binary staged costs no 32 MiB more; and a hand edit through the managed
//! path still changes the live generation only — the store's blob keeps
//! its bytes (copy on write), the drift check reports the edit, and the
//! next generation is staged from the intact blob. Runs the node program
//! (`KDEPLOY_PREFIX`) on a real XFS in a loop-mounted image: needs root,
//! mkfs.xfs and a loop device; skipped with a message without them, and
//! failed when CI is set (`.ci/run` installs xfsprogs).

use crate::support;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;

use kdeploy::node::Node;
use kdeploy::store::Digest;
use kdeploy::transport::LocalHost;
use sha2::Digest as _;
use support::node::{blob, file, hold, manifest, push, record};

/// An XFS file system with reflinks, mounted until dropped.
struct Xfs {
    _dir: tempfile::TempDir,
    mount: PathBuf,
}

impl Xfs {
    fn new() -> Option<Xfs> {
        let dir = tempfile::tempdir().unwrap();
        let image = dir.path().join("xfs.img");
        let mount = dir.path().join("mnt");
        std::fs::create_dir(&mount).unwrap();
        let sh =
            |cmd: &str| Command::new("sh").arg("-c").arg(cmd).output().map(|o| o.status.success()).unwrap_or(false);
        let made = sh(&format!("truncate -s 400M {i} && mkfs.xfs -q -m reflink=1 {i}", i = image.display()))
            && sh(&format!("mount -o loop {} {}", image.display(), mount.display()));
        if !made {
            let why = "needs root, mkfs.xfs (xfsprogs) and a loop device";
            assert!(std::env::var_os("CI").is_none(), "the reflink staging test could not make its XFS: {why}");
            eprintln!("skipped: the reflink staging test {why}");
            return None;
        }
        Some(Xfs { _dir: dir, mount })
    }

    /// Bytes in use on the file system.
    fn used(&self) -> u64 {
        let out = Command::new("df").args(["--output=used", "-B1"]).arg(&self.mount).output().unwrap();
        String::from_utf8_lossy(&out.stdout).lines().nth(1).unwrap().trim().parse().unwrap()
    }
}

impl Drop for Xfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.mount).status();
    }
}

fn sha256(p: &Path) -> String {
    hex::encode(sha2::Sha256::digest(std::fs::read(p).unwrap()))
}

fn shares_extents(p: &Path) -> bool {
    let out = Command::new("filefrag").arg("-v").arg(p).output().unwrap();
    String::from_utf8_lossy(&out.stdout).contains("shared")
}

#[tokio::test(flavor = "multi_thread")]
async fn staging_on_a_reflink_file_system_makes_no_second_copy_and_keeps_the_store_intact() {
    let Some(xfs) = Xfs::new() else { return };
    let prefix = xfs.mount.to_str().unwrap().to_string();
    let host = LocalHost::new("local");
    let node = Node::install_with_prefix(&host, &prefix).await.unwrap();
    let lock = hold(&node, "test").await;
    let mut bytes = vec![0u8; 32 << 20];
    std::fs::File::open("/dev/urandom").unwrap().read_exact(&mut bytes).unwrap();
    let big = blob(bytes);
    push(&node, &[&big]).await;
    let state = xfs.mount.join("var/lib/kdeploy");
    let stored = state.join("store").join(big.b3.hex());
    assert_eq!(sha256(&stored), big.sha);

    let before = xfs.used();
    node.stage(1, "p", &manifest(vec![file("/opt/bin/big", "0755", &big)])).await.unwrap();
    let staged = state.join("generations/1/p/files/opt/bin/big");
    let grew = xfs.used().saturating_sub(before);
    assert!(grew < 4 << 20, "staging 32 MiB took {grew} bytes more: a second copy");
    assert!(shares_extents(&staged), "the staged file shares no extent with the store's blob");
    assert_eq!(sha256(&staged), big.sha);

    node.switch(Some(1), "p").await.unwrap();
    node.commit(1, &Digest([1; 32]), Some(&record("p", Digest([2; 32]), 1))).await.unwrap();
    lock.release().await;

    // a hand edit in place, through the managed path, a second later (the
    // drift check compares mtimes in whole seconds: an edit of the same
    // size within the second of staging goes unseen, on any file system)
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let managed = xfs.mount.join("opt/bin/big");
    let edited = Command::new("dd")
        .args(["if=/dev/zero", "bs=4096", "count=1", "seek=100", "conv=notrunc,fsync"])
        .arg(format!("of={}", managed.display()))
        .output()
        .unwrap();
    assert!(edited.status.success());
    assert_ne!(sha256(&managed), big.sha, "the edit did not land");
    assert_eq!(sha256(&stored), big.sha, "the hand edit reached the store's blob");
    let (node, lock, st) = Node::open_locked(&host, &prefix, "test").await.unwrap();
    let drift: Vec<String> = st.drift.iter().map(|d| format!("{d:?}")).collect();
    assert!(drift.iter().any(|d| d.contains("/opt/bin/big")), "the edit is not reported as drift: {drift:?}");

    // the next generation comes from the intact blob
    node.stage(2, "p", &manifest(vec![file("/opt/bin/big", "0700", &big)])).await.unwrap();
    assert_eq!(sha256(&state.join("generations/2/p/files/opt/bin/big")), big.sha);
    lock.release().await;
}
