//! The node program's durability commands against a directory on this
//! machine (`KDEPLOY_PREFIX`, through `LocalHost`): a reused blob that was
//! truncated or altered counts as missing and is sent again (a secret gets
//! its 0600 back), and `gc` removes the generations it is told to and the
//! blobs no remaining generation names, never the committed or a linked
//! generation. The same on real nodes, through `kdeploy`, is in
//! `tests/lab/durability.rs`.

use crate::support;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use kdeploy::node::gc::{plan_generations, Protected};
use kdeploy::node::{Node, WantedBlob};
use kdeploy::store::Digest;
use kdeploy::transport::{Host, LocalHost};
use support::node::{blob, file, hold, local_host_without, manifest, push, record, wanted};

fn mode(p: &Path) -> u32 {
    fs::metadata(p).unwrap().permissions().mode() & 0o777
}

#[tokio::test(flavor = "multi_thread")]
async fn damaged_blobs_count_as_missing_and_are_sent_again() {
    damaged_blobs_on(LocalHost::new("local")).await
}

/// The same on a node without openssl: coreutils' sha256sum checks.
#[tokio::test(flavor = "multi_thread")]
async fn damaged_blobs_count_as_missing_without_openssl() {
    let (_bin, host) = local_host_without("openssl");
    damaged_blobs_on(host).await
}

async fn damaged_blobs_on(host: LocalHost) {
    let dir = tempfile::tempdir().unwrap();
    let prefix = dir.path().to_str().unwrap().to_string();
    let node = Node::install_with_prefix(&host, &prefix).await.unwrap();
    let _lock = hold(&node, "test").await;
    let store = dir.path().join("var/lib/kdeploy/store");
    let (a, b) = (blob("a blob of some length\n"), blob("another blob\n"));
    push(&node, &[&a, &b]).await;
    assert!(node.missing(&[wanted(&a), wanted(&b)]).await.unwrap().is_empty());

    // truncated: its size differs, checked with or without a sha256
    let pa = store.join(a.b3.hex());
    fs::set_permissions(&pa, fs::Permissions::from_mode(0o644)).unwrap();
    fs::write(&pa, &a.bytes[..5]).unwrap();
    let size_only = WantedBlob { sha256: None, ..wanted(&a) };
    assert_eq!(node.missing(&[size_only.clone(), wanted(&b)]).await.unwrap(), vec![a.b3]);
    assert!(!pa.exists(), "the damaged blob is removed, so `put` stores it again");
    push(&node, &[&a]).await;
    assert_eq!(fs::read(&pa).unwrap(), a.bytes);
    assert_eq!(mode(&pa), 0o444);

    // same size, other bytes: only the sha256 tells
    let pb = store.join(b.b3.hex());
    fs::set_permissions(&pb, fs::Permissions::from_mode(0o644)).unwrap();
    fs::write(&pb, b"ANOTHER BLOB\n").unwrap();
    assert!(node.missing(&[WantedBlob { sha256: None, ..wanted(&b) }]).await.unwrap().is_empty());
    assert_eq!(node.missing(&[wanted(&b)]).await.unwrap(), vec![b.b3]);
    push(&node, &[&b]).await;
    assert_eq!(fs::read(&pb).unwrap(), b.bytes);

    // a secret: checked by size, re-sent 0600
    let secret = b"-----BEGIN KEY-----\nsecret\n".to_vec();
    let k = Digest([9; 32]);
    node.put_secrets(&[(k, secret.as_slice())]).await.unwrap();
    let ps = dir.path().join("var/lib/kdeploy/secrets").join(k.hex());
    let want = WantedBlob { hash: k, size: secret.len() as u64, sha256: None };
    assert!(node.missing(std::slice::from_ref(&want)).await.unwrap().is_empty());
    fs::write(&ps, b"-----BEGIN").unwrap();
    assert_eq!(node.missing(std::slice::from_ref(&want)).await.unwrap(), vec![k]);
    node.put_secrets(&[(k, secret.as_slice())]).await.unwrap();
    assert_eq!(fs::read(&ps).unwrap(), secret);
    assert_eq!(mode(&ps), 0o600);

    // several secrets in one command, each 0600, the one already there kept
    let secrets = dir.path().join("var/lib/kdeploy/secrets");
    let (k2, k3) = (Digest([10; 32]), Digest([11; 32]));
    node.put_secrets(&[(k, secret.as_slice()), (k2, b"two".as_slice()), (k3, b"three\n".as_slice())]).await.unwrap();
    for (key, bytes) in [(k, &secret[..]), (k2, b"two"), (k3, b"three\n")] {
        let p = secrets.join(key.hex());
        assert_eq!((fs::read(&p).unwrap(), mode(&p)), (bytes.to_vec(), 0o600), "{key}");
    }
    // a stream cut short (no `end` line, or fewer bytes than a length says)
    // is refused and keeps none of its secrets
    let token = std::fs::read_to_string(dir.path().join("var/lib/kdeploy/lock.token")).unwrap();
    let token = token.split_whitespace().next().unwrap().to_string();
    let k4 = Digest([12; 32]);
    for cut in [format!("{} 4\nfour", k4.hex()), format!("{} 40\nfour\nend\n", k4.hex())] {
        let cmd = node.command(&["--held", &token, "put-secrets"]);
        let out = host.upload(&cmd, &mut cut.as_bytes()).await.unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status != 0 && err.contains("did not all arrive"), "{cut:?}: {} {err}", out.status);
        assert!(!secrets.join(k4.hex()).exists(), "{cut:?}");
        let left = fs::read_dir(secrets.join(".tmp")).map(|d| d.count()).unwrap_or(0);
        assert_eq!(left, 0, "{cut:?}: a refused stream left its files");
    }
    // hostile headers: a name that is not a keyed hash (a path out of the
    // directory, a quote, a newline in it), a length that is not a number
    // or absurdly large: refused, nothing written anywhere
    let outside = dir.path().join("escaped");
    let hostile = [
        "../../../escaped 4\nfour\nend\n".to_string(),
        format!("{}' 4\nfour\nend\n", k4.hex()),
        format!("{} -4\nfour\nend\n", k4.hex()),
        format!("{} 4;rm\nfour\nend\n", k4.hex()),
        format!("{} 99999999999999999999999\nfour\nend\n", k4.hex()),
    ];
    for h in hostile {
        let cmd = node.command(&["--held", &token, "put-secrets"]);
        let out = host.upload(&cmd, &mut h.as_bytes()).await.unwrap();
        assert_ne!(out.status, 0, "{h:?} was taken");
        assert!(!secrets.join(k4.hex()).exists() && !outside.exists(), "{h:?} wrote a file");
        let left = fs::read_dir(secrets.join(".tmp")).map(|d| d.count()).unwrap_or(0);
        assert_eq!(left, 0, "{h:?}: a refused stream left its files");
    }

    // a bad line is refused, not taken for "present"
    let bad = WantedBlob { sha256: Some("not-a-sum".into()), ..wanted(&a) };
    assert!(node.missing(&[bad]).await.is_err());
}

#[tokio::test(flavor = "multi_thread")]
async fn gc_removes_old_generations_and_unnamed_blobs_only() {
    let dir = tempfile::tempdir().unwrap();
    let prefix = dir.path().to_str().unwrap().to_string();
    let host = LocalHost::new("local");
    let node = Node::install_with_prefix(&host, &prefix).await.unwrap();
    let _lock = hold(&node, "test").await;
    let root = dir.path().join("var/lib/kdeploy");
    let blobs: Vec<_> = (1..=4).map(|i| blob(format!("config {i}\n"))).collect();
    push(&node, &blobs.iter().collect::<Vec<_>>()).await;
    let orphan = blob("never staged\n");
    push(&node, &[&orphan]).await;
    // generations 1..4 of one phase, each committed with its record
    for (i, b) in blobs.iter().enumerate() {
        let g = i as u64 + 1;
        node.stage(g, "files", &manifest(vec![file("/etc/t/a.conf", "0644", b)])).await.unwrap();
        node.switch(Some(g), "files").await.unwrap();
        node.commit(g, &Digest([g as u8; 32]), Some(&record("files", Digest([g as u8; 32]), g))).await.unwrap();
    }
    fs::write(root.join("store/.tmp/half-an-upload"), b"xx").unwrap();

    let info = node.gc_info().await.unwrap();
    assert_eq!(info.iter().map(|g| g.number).collect::<Vec<_>>(), vec![1, 2, 3, 4]);
    let st = node.status().await.unwrap();
    let protected = Protected {
        current: st.current.map(|c| c.0),
        linked: st.phases.values().copied().collect(),
        recorded: [2].into(),
    };
    let plan = plan_generations(&info, &protected, 1);
    assert_eq!(plan.remove, vec![1, 3]);

    // the committed and linked generation is refused, whatever the caller says
    assert!(node.gc(&[4], false).await.is_err());
    let dry = node.gc(&plan.remove, true).await.unwrap();
    assert!(root.join("generations/1").is_dir() && root.join("store").join(blobs[0].b3.hex()).exists());
    let r = node.gc(&plan.remove, false).await.unwrap();
    assert_eq!(r, dry, "a dry run reports what a real one does");
    assert_eq!(r.generations, vec![1, 3]);
    assert_eq!((r.blobs, r.partial), (3, 1), "blobs of 1 and 3, the orphan, the upload: {r:?}");
    assert!(r.bytes > 0);
    assert!(!root.join("generations/1").exists() && !root.join("generations/3").exists());
    for (i, b) in blobs.iter().enumerate() {
        let kept = i == 1 || i == 3;
        assert_eq!(root.join("store").join(b.b3.hex()).exists(), kept, "blob of generation {}", i + 1);
        assert_eq!(r.referenced.contains(&b.b3), kept);
    }
    assert!(!root.join("store").join(orphan.b3.hex()).exists());
    assert!(!root.join("store/.tmp/half-an-upload").exists());
    // what is left still works: back to generation 2 and forward again
    node.switch(Some(2), "files").await.unwrap();
    assert_eq!(fs::read_to_string(dir.path().join("etc/t/a.conf")).unwrap(), "config 2\n");
    node.switch(Some(4), "files").await.unwrap();
    assert_eq!(fs::read_to_string(dir.path().join("etc/t/a.conf")).unwrap(), "config 4\n");
    assert_eq!(node.gc(&[], false).await.unwrap().generations, Vec::<u64>::new());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_failed_stage_leaves_no_half_copied_phase() {
    let dir = tempfile::tempdir().unwrap();
    let prefix = dir.path().to_str().unwrap().to_string();
    let host = LocalHost::new("local");
    let node = Node::install_with_prefix(&host, &prefix).await.unwrap();
    let _lock = hold(&node, "test").await;
    let (here, absent) = (blob("copied first\n"), blob("never pushed\n"));
    push(&node, &[&here]).await;
    let m = manifest(vec![file("/etc/t/a.conf", "0644", &here), file("/etc/t/b.conf", "0644", &absent)]);
    let err = node.stage(1, "p", &m).await.unwrap_err();
    assert!(err.to_string().contains("not in the store"), "{err}");
    assert!(!dir.path().join("var/lib/kdeploy/generations/1/p").exists(), "the half-staged phase is still there");
    // once the blob is there, the same stage succeeds
    push(&node, &[&absent]).await;
    node.stage(1, "p", &m).await.unwrap();
    assert!(dir.path().join("var/lib/kdeploy/generations/1/p/.complete").exists());
}
