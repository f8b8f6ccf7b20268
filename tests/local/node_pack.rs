//! Small blobs sent together as a pack (one tar archive, then a line
//! `BLAKE3 SHA256` a member) against the real node program in a directory
//! on this machine: a put of many small blobs lands them all, each with its
//! bytes; hostile packs (members missing, extra, linked, escaping, twice,
//! with a wrong sha256, a stream cut short) are refused and leave nothing
//! in the store, and nothing outside it.

use crate::support;
use std::fs;
use std::path::Path;

use kdeploy::node::{Body, Node, PutBlob, Sha256};
use kdeploy::transport::{Host, LocalHost};
use support::node::{blob, hold, Blob};

/// A tar member: its name (any bytes), its type and, for a link, its target.
struct Member<'a> {
    name: &'a [u8],
    kind: tar::EntryType,
    link: &'a str,
    bytes: &'a [u8],
}

fn regular<'a>(name: &'a str, bytes: &'a [u8]) -> Member<'a> {
    Member { name: name.as_bytes(), kind: tar::EntryType::Regular, link: "", bytes }
}

/// An archive of `members`, their names written as they are (the `tar`
/// crate refuses `..` and absolute names; a hostile deployer would not).
fn archive(members: &[Member<'_>]) -> Vec<u8> {
    let mut out = Vec::new();
    for m in members {
        let mut h = tar::Header::new_ustar();
        h.as_old_mut().name[..m.name.len()].copy_from_slice(m.name);
        h.set_entry_type(m.kind);
        h.set_size(m.bytes.len() as u64);
        h.set_mode(0o644);
        if !m.link.is_empty() {
            h.set_link_name(m.link).unwrap();
        }
        h.set_cksum();
        out.extend_from_slice(h.as_bytes());
        out.extend_from_slice(m.bytes);
        out.resize(out.len().div_ceil(512) * 512, 0);
    }
    out.extend_from_slice(&[0; 1024]);
    out
}

/// A pack as the node reads it: its header, `tar`, then `lines`.
fn pack(count: impl std::fmt::Display, tar: &[u8], lines: &[(&str, &str)]) -> Vec<u8> {
    let mut out = format!("pack {count} {} tar\n", tar.len()).into_bytes();
    out.extend_from_slice(tar);
    for (b3, sha) in lines {
        out.extend_from_slice(format!("{b3} {sha}\n").as_bytes());
    }
    out
}

fn stored(dir: &Path, b: &Blob) -> Option<Vec<u8>> {
    fs::read(dir.join(format!("node/var/lib/kdeploy/store/{}", b.b3))).ok()
}

#[tokio::test(flavor = "multi_thread")]
async fn small_blobs_arrive_as_one_pack_and_hostile_packs_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let prefix = dir.path().join("node").to_str().unwrap().to_string();
    let host = LocalHost::new("local");
    let node = Node::install_with_prefix(&host, &prefix).await.unwrap();
    let _lock = hold(&node, "test").await;

    // forty small blobs and one empty: one pack through the deployer's put
    let blobs: Vec<Blob> = (0..40).map(|i| blob(format!("etcd.conf {i}\n").repeat(i + 1))).chain([blob("")]).collect();
    let put: Vec<PutBlob<'_>> = blobs
        .iter()
        .map(|b| PutBlob { hash: b.b3, sha256: Sha256::Known(&b.sha), body: Body::Bytes(&b.bytes) })
        .collect();
    let sent = node.put(&put).await.unwrap();
    let bytes: usize = blobs.iter().map(|b| b.bytes.len()).sum();
    assert!(sent as usize > bytes, "a pack's archive holds every byte: {sent} sent for {bytes}");
    for b in &blobs {
        assert_eq!(stored(dir.path(), b).as_deref(), Some(&b.bytes[..]), "blob {} as sent", b.b3);
    }

    // by hand, as anyone holding the lock could
    let token = fs::read_to_string(dir.path().join("node/var/lib/kdeploy/lock.token")).unwrap();
    let token = token.split_whitespace().next().unwrap().to_string();
    let (a, b) = (blob("kubelet.conf"), blob("kubeadm.yaml"));
    let (ah, bh) = (a.b3.hex(), b.b3.hex());
    let good = archive(&[regular(&ah, &a.bytes), regular(&bh, &b.bytes)]);
    let lines = [(&ah[..], &a.sha[..]), (&bh[..], &b.sha[..])];
    let outside = dir.path().join("escaped");
    let escape = format!("../../../../../../..{}", outside.display());
    let absolute = outside.display().to_string();
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("a count that is not digits", pack("2x", &good, &lines)),
        ("a count of 0", pack(0, &good, &[])),
        ("a count with a leading zero", pack("02", &good, &lines)),
        ("an unknown encoding", format!("pack 2 {} zip\n", good.len()).into_bytes()),
        ("a stream ending inside the archive", pack(2, &good, &[])[..good.len() / 2].to_vec()),
        ("a member line missing", pack(2, &good, &lines[..1])),
        ("a member not in the archive", pack(2, &archive(&[regular(&ah, &a.bytes)]), &lines)),
        ("a file in the archive that is no member", pack(1, &good, &lines[..1])),
        ("a member twice", pack(2, &archive(&[regular(&ah, &a.bytes), regular("x", b"")]), &[lines[0], lines[0]])),
        ("a member's wrong sha256", pack(2, &good, &[lines[0], (&bh, &a.sha)])),
        ("a member that is a link", {
            let l = Member { name: bh.as_bytes(), kind: tar::EntryType::Symlink, link: "/etc/passwd", bytes: b"" };
            pack(2, &archive(&[regular(&ah, &a.bytes), l]), &lines)
        }),
        ("a member that is a directory", {
            let d = Member { name: bh.as_bytes(), kind: tar::EntryType::Directory, link: "", bytes: b"" };
            pack(2, &archive(&[regular(&ah, &a.bytes), d]), &lines)
        }),
        ("a file escaping with ..", pack(1, &archive(&[regular(&ah, &a.bytes), regular(&escape, b"x")]), &lines[..1])),
        ("a file named absolute", pack(1, &archive(&[regular(&ah, &a.bytes), regular(&absolute, b"x")]), &lines[..1])),
        ("an archive cut short", pack(2, &good[..good.len() - 1200], &lines)),
        ("not an archive", pack(2, &vec![b'z'; good.len()], &lines)),
    ];
    for (what, body) in cases {
        let out = host.exec(&node.command(&["--held", &token, "put"]), Some(&body)).await.unwrap();
        assert_ne!(out.status, 0, "{what}: accepted");
        assert!(stored(dir.path(), &a).is_none() && stored(dir.path(), &b).is_none(), "{what}: admitted");
        let tmp = dir.path().join("node/var/lib/kdeploy/store/.tmp");
        let left: Vec<_> = fs::read_dir(&tmp).map(|d| d.flatten().map(|e| e.path()).collect()).unwrap_or_default();
        assert!(left.is_empty(), "{what}: left {left:?}");
        assert!(!outside.exists(), "{what}: wrote outside the store");
    }
    // the good pack, and one member the node holds already (dropped)
    let held = &blobs[0];
    let with_held =
        archive(&[regular(&ah, &a.bytes), regular(&held.b3.hex(), b"not its bytes"), regular(&bh, &b.bytes)]);
    let body = pack(3, &with_held, &[lines[0], (&held.b3.hex(), &held.sha), lines[1]]);
    let out = host.exec(&node.command(&["--held", &token, "put"]), Some(&body)).await.unwrap();
    assert_eq!(out.status, 0, "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(stored(dir.path(), &a).as_deref(), Some(&a.bytes[..]));
    assert_eq!(stored(dir.path(), &b).as_deref(), Some(&b.bytes[..]));
    assert_eq!(stored(dir.path(), held).as_deref(), Some(&held.bytes[..]), "a held blob is kept as it was");
}
