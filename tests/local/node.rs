//! The node program against a directory on this machine (`KDEPLOY_PREFIX`,
//! through `LocalHost`): store, stage, switch, rollback, commit — the file
//! logic without SSH or systemd. The same operations on real nodes are in
//! `tests/lab/node.rs`.

use crate::support;
use std::fs;
use std::path::Path;

use kdeploy::node::{Node, NodeError};
use kdeploy::store::Digest;
use kdeploy::transport::{Host, LocalHost};
use support::node::{blob, file, hold, local_host_without, manifest, push, record, wanted, Blob};

fn read(p: &Path) -> String {
    fs::read_to_string(p).unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn stage_switch_rollback_in_a_directory() {
    let dir = tempfile::tempdir().unwrap();
    let prefix = dir.path().to_str().unwrap().to_string();
    let host = LocalHost::new("local");
    let node = Node::install_with_prefix(&host, &prefix).await.unwrap();
    let _lock = hold(&node, "test").await;
    let st = node.status().await.unwrap();
    assert_eq!(st.current, None);
    assert_eq!(st.next, 1);

    let (a1, b1, a2, b2, c2) = (blob("a one\n"), blob("b one\n"), blob("a two\n"), blob("b two\n"), blob("c\n"));
    push(&node, &[&a1, &b1, &a2, &b2, &c2]).await;
    assert!(node.missing(&[wanted(&a1), wanted(&c2)]).await.unwrap().is_empty());

    let one = manifest(vec![file("/etc/t/a.conf", "0644", &a1), file("/etc/t/b.conf", "0600", &b1)]);
    let mut two = manifest(vec![
        file("/etc/t/a.conf", "0644", &a2),
        file("/etc/t/b.conf", "0600", &b2),
        file("/etc/t/c.conf", "0644", &c2),
    ]);
    two.directories.push(kdeploy::node::DirEntry {
        path: "/var/lib/t".into(),
        mode: "0700".into(),
        owner: "root".into(),
        group: "root".into(),
    });
    // an unmanaged file where generation 2 puts c.conf
    fs::create_dir_all(dir.path().join("etc/t")).unwrap();
    fs::write(dir.path().join("etc/t/c.conf"), "original\n").unwrap();

    node.stage(1, "files", &one).await.unwrap();
    node.stage(1, "files", &one).await.unwrap(); // idempotent
    assert!(matches!(node.stage(1, "files", &two).await, Err(NodeError::Command { .. })));
    node.switch(Some(1), "files").await.unwrap();
    assert!(node.status().await.unwrap().pending, "a moved link is pending until committed");
    node.commit(1, &Digest([1; 32]), Some(&record("files", Digest([2; 32]), 1))).await.unwrap();
    // a generation is committed with its phase record, or keeps the one it has
    assert_eq!(node.phase_record(1).await.unwrap(), record("files", Digest([2; 32]), 1));
    node.commit(1, &Digest([1; 32]), None).await.unwrap();
    assert!(!node.status().await.unwrap().pending);
    assert!(matches!(node.commit(9, &Digest([1; 32]), None).await, Err(NodeError::Command { .. })));
    let a = dir.path().join("etc/t/a.conf");
    let b = dir.path().join("etc/t/b.conf");
    let c = dir.path().join("etc/t/c.conf");
    assert_eq!((read(&a), read(&b)), ("a one\n".into(), "b one\n".into()));
    assert_eq!(fs::read_link(&a).unwrap(), dir.path().join("var/lib/kdeploy/phases/files/files/etc/t/a.conf"));
    assert_eq!(read(&c), "original\n");

    node.stage(2, "files", &two).await.unwrap();
    node.switch(Some(2), "files").await.unwrap();
    assert_eq!((read(&a), read(&b), read(&c)), ("a two\n".into(), "b two\n".into(), "c\n".into()));
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(fs::metadata(&b).unwrap().permissions().mode() & 0o777, 0o600);
    assert_eq!(fs::metadata(dir.path().join("var/lib/t")).unwrap().permissions().mode() & 0o777, 0o700);
    let st = node.status().await.unwrap();
    assert_eq!(st.phases.get("files"), Some(&2));
    assert_eq!(st.next, 3);
    assert_eq!(node.manifest(2, "files").await.unwrap(), two);

    // rollback: one rename back; c.conf leaves the phase, the original returns
    node.switch(Some(1), "files").await.unwrap();
    assert_eq!((read(&a), read(&b), read(&c)), ("a one\n".into(), "b one\n".into(), "original\n".into()));
    assert!(!fs::symlink_metadata(&c).unwrap().file_type().is_symlink());
    // generation 2 is intact for a later switch
    let g2 = dir.path().join("var/lib/kdeploy/generations/2/files/files/etc/t/a.conf");
    assert_eq!(read(&g2), "a two\n");

    // removing the phase removes its managed paths
    node.switch(None, "files").await.unwrap();
    assert!(fs::symlink_metadata(&a).is_err());
    assert_eq!(read(&c), "original\n");
    // both generations stay, the first one committed
    let gens: Vec<(u64, bool)> = node.gc_info().await.unwrap().iter().map(|g| (g.number, g.committed)).collect();
    assert_eq!(gens, [(1, true), (2, false)]);
    assert_eq!(node.status().await.unwrap().current, Some((1, Digest([1; 32]))));
    host.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn corrupted_blob_is_rejected() {
    corrupted_blob_is_rejected_on(LocalHost::new("local")).await
}

/// The same on a node without openssl: coreutils' sha256sum checks.
#[tokio::test(flavor = "multi_thread")]
async fn corrupted_blob_is_rejected_without_openssl() {
    let (_bin, host) = local_host_without("openssl");
    corrupted_blob_is_rejected_on(host).await
}

async fn corrupted_blob_is_rejected_on(host: LocalHost) {
    let dir = tempfile::tempdir().unwrap();
    let prefix = dir.path().to_str().unwrap().to_string();
    let node = Node::install_with_prefix(&host, &prefix).await.unwrap();
    let _lock = hold(&node, "test").await;
    // a small blob (checked with the others at the end of the put) and a
    // large one (checked in the background as soon as it is written)
    let large: Vec<u8> = (0..3u32 << 20).map(|i| (i % 251) as u8).collect();
    for good in [blob("payload"), blob(large)] {
        let mut damaged = good.bytes.clone();
        if let Some(last) = damaged.last_mut() {
            *last ^= 1;
        }
        let err = node.put_bytes(&good.b3, &good.sha, &damaged).await.unwrap_err();
        assert!(err.to_string().contains("sha256"), "{} bytes: {err}", good.bytes.len());
        assert_eq!(node.missing(&[wanted(&good)]).await.unwrap(), vec![good.b3]);
        node.put_bytes(&good.b3, &good.sha, &good.bytes).await.unwrap();
        assert!(node.missing(&[wanted(&good)]).await.unwrap().is_empty());
        let stored = std::fs::read(dir.path().join(format!("var/lib/kdeploy/store/{}", good.b3))).unwrap();
        assert!(stored == good.bytes, "the store holds other bytes than were sent");
    }
    // a stage referring to a missing blob fails and leaves nothing switchable
    let other = blob("other");
    let m = manifest(vec![file("/etc/x", "0644", &other)]);
    assert!(node.stage(1, "p", &m).await.is_err());
    assert!(node.switch(Some(1), "p").await.is_err());
}

/// A run stages all of a node's phases in one command: each file gets its
/// own mode and owner, a phase with a missing blob fails naming itself,
/// and the phases before it stay staged.
#[tokio::test(flavor = "multi_thread")]
async fn several_phases_staged_in_one_command() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let dir = tempfile::tempdir().unwrap();
    let prefix = dir.path().to_str().unwrap().to_string();
    let host = LocalHost::new("local");
    let node = Node::install_with_prefix(&host, &prefix).await.unwrap();
    let _lock = hold(&node, "test").await;
    let (x, y, z) = (blob("x\n"), blob("#!/bin/sh\n"), blob("secret\n"));
    push(&node, &[&x, &y, &z]).await;
    let root = nix_uid() == 0;
    let mut secret = file("/etc/b/deep/key", "0640", &z);
    if root {
        (secret.owner, secret.group) = ("nobody".into(), "nogroup".into());
    }
    let a = manifest(vec![file("/etc/a/x.conf", "0644", &x), file("/usr/local/bin/a", "0755", &y)]);
    let b = manifest(vec![secret, file("/etc/b/x.conf", "0600", &x)]);
    node.stage_phases(1, &[("a", &a), ("b", &b)]).await.unwrap();

    let staged =
        |g: u64, p: &str, path: &str| dir.path().join(format!("var/lib/kdeploy/generations/{g}/{p}/files{path}"));
    let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o7777;
    assert_eq!(read(&staged(1, "a", "/etc/a/x.conf")), "x\n");
    assert_eq!(mode(&staged(1, "a", "/etc/a/x.conf")), 0o644);
    assert_eq!(mode(&staged(1, "a", "/usr/local/bin/a")), 0o755);
    assert_eq!(mode(&staged(1, "b", "/etc/b/x.conf")), 0o600);
    let key = staged(1, "b", "/etc/b/deep/key");
    assert_eq!((read(&key), mode(&key)), ("secret\n".into(), 0o640));
    if root {
        assert_eq!(fs::metadata(&key).unwrap().uid(), 65534, "owned by nobody");
    }
    assert_eq!(node.manifest(1, "a").await.unwrap(), a);
    assert_eq!(node.manifest(1, "b").await.unwrap(), b);
    // staged once, staged again: nothing to do
    node.stage_phases(1, &[("a", &a), ("b", &b)]).await.unwrap();

    let lost = blob("never sent");
    let c = manifest(vec![file("/etc/c", "0644", &lost)]);
    let err = node.stage_phases(2, &[("a", &a), ("c", &c)]).await.unwrap_err().to_string();
    assert!(err.contains("stage c:") && err.contains("not in the store"), "{err}");
    assert!(staged(2, "a", "").join("../.complete").exists(), "the phase before the failure is staged");
    assert!(!staged(2, "c", "").join("..").exists(), "the failed phase left nothing");
    node.switch(Some(2), "a").await.unwrap();
    assert!(node.switch(Some(2), "c").await.is_err());
}

fn nix_uid() -> u32 {
    use std::os::unix::fs::MetadataExt;
    fs::metadata("/proc/self").unwrap().uid()
}

/// Every path below `root`, for comparing a tree before and after.
fn tree(root: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut todo = vec![root.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in fs::read_dir(&d).into_iter().flatten().flatten() {
            out.push(e.path().strip_prefix(root).unwrap().display().to_string());
            if e.file_type().unwrap().is_dir() {
                todo.push(e.path());
            }
        }
    }
    out.sort();
    out
}

#[tokio::test(flavor = "multi_thread")]
async fn status_reads_a_node_without_installing_or_changing_anything() {
    let dir = tempfile::tempdir().unwrap();
    let prefix = dir.path().to_str().unwrap().to_string();
    let host = LocalHost::new("local");
    // never deployed: nothing is created, not even the program
    let st = Node::status_read_only(&host, &prefix).await.unwrap();
    assert_eq!((st.current, st.next, st.pending), (None, 1, false));
    assert!(tree(dir.path()).is_empty(), "status wrote {:?}", tree(dir.path()));

    // deployed: the same answer as the installed program's, and the tree as it was
    let node = Node::install_with_prefix(&host, &prefix).await.unwrap();
    let lock = hold(&node, "test").await;
    let a = blob("a\n");
    push(&node, &[&a]).await;
    node.stage(1, "p", &manifest(vec![file("/etc/t/a.conf", "0644", &a)])).await.unwrap();
    node.switch(Some(1), "p").await.unwrap();
    node.commit(1, &Digest([1; 32]), Some(&record("p", Digest([2; 32]), 1))).await.unwrap();
    lock.release().await;
    // a hand edit: drift, which both readings must report alike
    let managed = dir.path().join("etc/t/a.conf");
    fs::remove_file(&managed).unwrap();
    fs::write(&managed, "edited by hand\n").unwrap();
    let before = tree(dir.path());
    let st = Node::status_read_only(&host, &prefix).await.unwrap();
    assert_eq!(st.current.map(|c| c.0), Some(1));
    assert!(!st.drift.is_empty(), "the hand edit is not reported");
    assert_eq!(st.drift, node.status_verified().await.unwrap().drift);
    assert_eq!(tree(dir.path()), before, "status changed the node");
}

#[tokio::test(flavor = "multi_thread")]
async fn output_past_the_limit_is_read_dropped_and_said_so() {
    let host = LocalHost::new("local");
    let p = host.spawn("head -c 3000000 /dev/zero; echo err >&2; exit 3").await.unwrap();
    let (out, dropped) = p.wait_bounded(1 << 20).await;
    assert_eq!((out.status, out.stdout.len(), out.stderr.as_slice(), dropped), (3, 1 << 20, &b"err\n"[..], true));
    let p = host.spawn("echo small").await.unwrap();
    let (out, dropped) = p.wait_bounded(1 << 20).await;
    assert_eq!((out.stdout.as_slice(), dropped), (&b"small\n"[..], false));
}

/// Phase `p` of a node in `dir`, generation `generation` staged, switched
/// and committed: /etc/t/a.conf and /etc/t/b.conf holding `a` and `b`.
async fn commit_two_files(host: &LocalHost, prefix: &str, generation: u64, a: &Blob, b: &Blob) {
    let (node, lock, _) = Node::open_locked(host, prefix, "test").await.unwrap();
    push(&node, &[a, b]).await;
    let files = vec![file("/etc/t/a.conf", "0644", a), file("/etc/t/b.conf", "0644", b)];
    node.stage(generation, "p", &manifest(files)).await.unwrap();
    node.switch(Some(generation), "p").await.unwrap();
    let gen_digest = Digest([generation as u8; 32]);
    node.commit(generation, &gen_digest, Some(&record("p", Digest([0xee; 32]), generation))).await.unwrap();
    lock.release().await;
}

/// The drift a run's lock finds on the node in `prefix`, as text.
async fn drift_of(host: &LocalHost, prefix: &str) -> Vec<String> {
    let (_, lock, st) = Node::open_locked(host, prefix, "test").await.unwrap();
    lock.release().await;
    st.drift.iter().map(|d| format!("{d:?}")).collect()
}

/// A run's verify (`lock --status --verify`) that finds nothing keeps the
/// stat of every path it looked at, and the next one compares one stat pass
/// with it: what it then reports must be what the full look reports.
#[tokio::test(flavor = "multi_thread")]
async fn drift_after_a_clean_verify_is_reported_as_before() {
    let dir = tempfile::tempdir().unwrap();
    let prefix = dir.path().to_str().unwrap().to_string();
    let host = LocalHost::new("local");
    Node::install_with_prefix(&host, &prefix).await.unwrap();
    commit_two_files(&host, &prefix, 1, &blob("a\n"), &blob("b\n")).await;
    let drift = || drift_of(&host, &prefix);
    let quick = dir.path().join("var/lib/kdeploy/verify.ok");
    assert_eq!(drift().await, Vec::<String>::new());
    assert!(quick.exists(), "a clean verify kept no stat");
    assert_eq!(drift().await, Vec::<String>::new(), "the quick way saw drift where there is none");

    // a hand edit through the link, and a link replaced by a copy
    fs::write(dir.path().join("etc/t/a.conf"), "edited by hand\n").unwrap();
    let b_conf = dir.path().join("etc/t/b.conf");
    fs::remove_file(&b_conf).unwrap();
    fs::write(&b_conf, "b\n").unwrap();
    let found = drift().await;
    assert_eq!(found.len(), 2, "{found:?}");
    assert!(found.iter().any(|d| d.contains("a.conf")) && found.iter().any(|d| d.contains("b.conf")), "{found:?}");
    assert!(!quick.exists(), "a verify that found drift kept its stat");
    assert_eq!(drift().await, found, "the same drift every time until it is repaired");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_edit_that_keeps_size_and_mtime_is_drift_and_older_stat_records_still_compare() {
    let dir = tempfile::tempdir().unwrap();
    let prefix = dir.path().to_str().unwrap().to_string();
    let host = LocalHost::new("local");
    Node::install_with_prefix(&host, &prefix).await.unwrap();
    let (a, b) = (blob("aaaa\n"), blob("bbbb\n"));
    commit_two_files(&host, &prefix, 1, &a, &b).await;
    let drift = || drift_of(&host, &prefix);
    let state = dir.path().join("var/lib/kdeploy");
    // an older program's record: size, mtime, mode, owner, group only
    let stat = state.join("phases/p/stat");
    let five: String = read(&stat).lines().map(|l| l.rsplit_once(' ').unwrap().0.to_string() + "\n").collect();
    assert_ne!(five, read(&stat), "the stat record has no ctime to drop");
    fs::write(&stat, &five).unwrap();
    assert_eq!(drift().await, Vec::<String>::new(), "an older record of unedited files is drift");
    assert_eq!(drift().await, Vec::<String>::new(), "the quick way after an older record");

    // a fresh record, then an edit of the same size with the mtime put back
    // (`touch -r` a copy of it), at once after staging: only the inode's
    // change time tells
    commit_two_files(&host, &prefix, 2, &a, &b).await;
    assert_eq!(drift().await, Vec::<String>::new());
    let (b_conf, keep) = (dir.path().join("etc/t/b.conf"), dir.path().join("mtime"));
    let edit = format!(
        "touch -r {b} {k} && printf 'XXXX\\n' > {b} && touch -r {k} {b}",
        b = b_conf.display(),
        k = keep.display()
    );
    assert!(std::process::Command::new("sh").arg("-c").arg(edit).status().unwrap().success());
    let found = drift().await;
    assert!(found.len() == 1 && found[0].contains("b.conf"), "{found:?}");
    assert_eq!(drift().await, found, "the same drift every time until it is repaired");
}

/// A large blob arrives as zstd frames, chunk by chunk, some compressed and
/// some stored (`store/compressed.rs`), and the node admits it whole;
/// hostile `frames` bodies are refused and leave nothing in the store.
#[tokio::test(flavor = "multi_thread")]
async fn chunked_blobs_arrive_whole_and_hostile_frames_are_refused() {
    use kdeploy::node::{Body, PutBlob, Sha256};
    use kdeploy::store::compressed::{Chunks, StoredFrame, CHUNK};
    use std::io::Read;
    let dir = tempfile::tempdir().unwrap();
    let prefix = dir.path().join("node").to_str().unwrap().to_string();
    // the node's zstd, wrapped to say at which priority a put runs it
    let (bin, host) = local_host_without("zstd");
    let zstd = std::process::Command::new("sh").args(["-c", "command -v zstd"]).output().unwrap();
    let zstd = String::from_utf8(zstd.stdout).unwrap().trim().to_string();
    assert!(!zstd.is_empty(), "zstd is needed on this machine");
    let niceness = dir.path().join("zstd-niceness");
    let wrapper = bin.path().join("zstd");
    let script = format!("#!/bin/sh\nps -o ni= -p $$ > '{}'\nexec '{zstd}' \"$@\"\n", niceness.display());
    fs::write(&wrapper, script).unwrap();
    fs::set_permissions(&wrapper, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let node = Node::install_with_prefix(&host, &prefix).await.unwrap();
    let _lock = hold(&node, "test").await;

    let bytes: Vec<u8> = (0..2 * CHUNK + 12345).map(|i| b"etcd containerd kubelet\n"[(i % 24) as usize]).collect();
    let b = blob(bytes.clone());
    let deployer = kdeploy::store::Store::new(dir.path().join("deployer"));
    assert_eq!(deployer.put(&bytes).unwrap(), b.b3);
    let chunks = Chunks::open(&deployer, &b.b3, &deployer.blob_path(&b.b3), bytes.len() as u64);
    // the first chunk compressed, the two others go stored
    let first = chunks.claim().unwrap();
    chunks.compress(first);
    // its sha256 worked out while the stream goes: the stream waits for it
    // after the body
    let sha256 = std::sync::Arc::new(std::sync::OnceLock::new());
    let later = sha256.clone();
    let ready = move || later.get().map(|s: &String| Ok(s.clone()));
    let put = [PutBlob { hash: b.b3, sha256: Sha256::Later(&ready), body: Body::Chunked(&chunks) }];
    let hashed = async {
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        sha256.set(b.sha.clone()).unwrap();
    };
    let (sent, ()) = tokio::join!(node.put(&put), hashed);
    let sent = sent.unwrap();
    assert!(sent < bytes.len() as u64 - CHUNK / 2, "the first chunk went compressed: {sent} bytes sent");
    let stored = dir.path().join(format!("node/var/lib/kdeploy/store/{}", b.b3));
    assert!(fs::read(&stored).unwrap() == bytes, "the store holds other bytes than were sent");
    // below the node's own services: 10 nicer than the command was
    let stat = read(Path::new("/proc/self/stat"));
    let ours: i32 = stat.rsplit(") ").next().unwrap().split(' ').nth(16).unwrap().parse().unwrap();
    assert_eq!(read(&niceness).trim(), (ours + 10).min(19).to_string(), "the niceness of the put's zstd");

    // by hand, as anyone holding the lock could: each hostile body refused
    let other = blob((0..CHUNK + 7).map(|i| (i % 7) as u8).collect::<Vec<u8>>());
    let token = read(&dir.path().join("node/var/lib/kdeploy/lock.token"));
    let token = token.split_whitespace().next().unwrap().to_string();
    let header = format!("{} {} {} frames\n", other.b3, other.sha, other.bytes.len());
    let later = format!("{} - {} frames\n", other.b3, other.bytes.len());
    let frame = |bytes: &[u8]| {
        let mut f = Vec::new();
        StoredFrame::new(bytes, bytes.len() as u64).read_to_end(&mut f).unwrap();
        let mut part = format!("{}\n", f.len()).into_bytes();
        part.extend(f);
        part
    };
    let whole = frame(&other.bytes);
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("a length that is not digits", [header.as_bytes(), b"12x\n"].concat()),
        ("a length past the stream's end", [header.as_bytes(), b"99999999\n", &whole[..100]].concat()),
        ("frames of other bytes", [header.as_bytes(), &frame(&bytes[..CHUNK as usize]), b"0\n"].concat()),
        ("no closing 0", [header.as_bytes(), &whole].concat()),
        ("a frame cut short", [header.as_bytes(), &whole[..whole.len() - 10], b"0\n"].concat()),
        ("an unknown encoding", format!("{} {} 3 zstd\nabc", other.b3, other.sha).into_bytes()),
        ("no sha256 after the body", [later.as_bytes(), &whole, b"0\n"].concat()),
        ("a sha256 cut short after the body", [later.as_bytes(), &whole, b"0\n", &other.sha.as_bytes()[..20]].concat()),
        ("not a sha256 after the body", [later.as_bytes(), &whole, b"0\n", b"-\n"].concat()),
        ("another blob's sha256 after the body", [later.as_bytes(), &whole, b"0\n", b.sha.as_bytes(), b"\n"].concat()),
    ];
    for (what, body) in cases {
        let out = host.exec(&node.command(&["--held", &token, "put"]), Some(&body)).await.unwrap();
        assert_ne!(out.status, 0, "{what}: accepted");
        assert!(!dir.path().join(format!("node/var/lib/kdeploy/store/{}", other.b3)).exists(), "{what}: admitted");
        let tmp = dir.path().join("node/var/lib/kdeploy/store/.tmp");
        let left: Vec<_> = fs::read_dir(&tmp).map(|d| d.flatten().map(|e| e.path()).collect()).unwrap_or_default();
        assert!(left.is_empty(), "{what}: left {left:?}");
    }
    // and the same stream, whole, is admitted, its sha256 after the body
    // too; a blob the node holds already is skipped, sha256 line and all
    let small = blob(b"resolv.conf".to_vec());
    let raw_later = format!("{} - {} raw\n", small.b3, small.bytes.len());
    let good = [later.as_bytes(), &whole, b"0\n", other.sha.as_bytes(), b"\n"].concat();
    let good = [&good[..], &good, raw_later.as_bytes(), &small.bytes, small.sha.as_bytes(), b"\n"].concat();
    let out = host.exec(&node.command(&["--held", &token, "put"]), Some(&good)).await.unwrap();
    assert_eq!(out.status, 0, "{}", String::from_utf8_lossy(&out.stderr));
    assert!(fs::read(dir.path().join(format!("node/var/lib/kdeploy/store/{}", other.b3))).unwrap() == other.bytes);
    assert!(fs::read(dir.path().join(format!("node/var/lib/kdeploy/store/{}", small.b3))).unwrap() == small.bytes);
}
