//! Staging many files under names a shell, sed or tar would read as
//! something else, against the real node program in a directory on this
//! machine. Small blobs are staged by tar, each renamed on its way by a
//! `--transform` of its own, a batch of 128 at a time; large ones, a
//! blob's second path and anything else by `cp`. What a user relies on:
//! every managed path holds exactly its own bytes with its declared mode,
//! nothing else lands in the generation, a secret is never readable by
//! others, the drift check finds nothing until a hand edit, then that edit.

use crate::support;
use std::collections::BTreeSet;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use kdeploy::node::{FileEntry, Node};
use kdeploy::store::Digest;
use kdeploy::transport::LocalHost;
use support::node::{blob, file, hold, manifest, push, record, Blob};

/// File names that mean something to sh, sed's and tar's substitutions,
/// globs or tar's member names.
const ODD: [&str; 16] = [
    "pipe|a",
    "back\\slash",
    "amp&and",
    "backref\\1",
    "case\\L\\U\\E",
    "dollar$HOME",
    "star*?",
    " spaces around ",
    "quote'\"`",
    "semi;colon,comma:",
    "ünïcödé",
    "brack[a-z]^",
    "-dash",
    "s|^x$|y|",
    "%percent%s",
    "trailing\\",
];

fn staged_paths(root: &Path, dir: &Path, out: &mut BTreeSet<String>) {
    for e in fs::read_dir(dir).unwrap() {
        let e = e.unwrap();
        let t = e.file_type().unwrap();
        if t.is_dir() {
            staged_paths(root, &e.path(), out);
        } else {
            out.insert(format!("/{}", e.path().strip_prefix(root).unwrap().display()));
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn files_under_odd_names_are_staged_each_with_its_own_bytes_and_mode() {
    let dir = tempfile::tempdir().unwrap();
    let prefix = dir.path().to_str().unwrap().to_string();
    let host = LocalHost::new("local");
    let node = Node::install_with_prefix(&host, &prefix).await.unwrap();
    let lock = hold(&node, "test").await;

    // 300 small files (three tar batches), in nested directories too, with
    // three modes; one blob at two paths; a blob of 2 MiB; a secret
    let mut entries: Vec<(String, String, Vec<u8>)> = (0..300)
        .map(|i| {
            let odd = ODD[i % ODD.len()];
            let path = if i % 3 == 0 { format!("/etc/odd {}/{odd}.{i}", i % 5) } else { format!("/etc/odd/{odd}.{i}") };
            let mode = ["0644", "0640", "0755"][i % 3].to_string();
            (path, mode, format!("the bytes of file {i}\n").into_bytes())
        })
        .collect();
    entries.push(("/srv/twin-a".into(), "0644".into(), b"twin\n".to_vec()));
    entries.push(("/srv/tw|in-b&".into(), "0600".into(), b"twin\n".to_vec()));
    entries.push(("/opt/big \\1.bin".into(), "0755".into(), (0..2u32 << 20).map(|i| (i % 251) as u8).collect()));
    let blobs: Vec<Blob> = entries.iter().map(|(_, _, b)| blob(b.clone())).collect();
    push(&node, &blobs.iter().collect::<Vec<_>>()).await;
    let mut files: Vec<FileEntry> = entries.iter().zip(&blobs).map(|(e, b)| file(&e.0, &e.1, b)).collect();
    let secret = b"-----BEGIN KEY-----\nnot for anyone else\n".to_vec();
    let key = Digest([7; 32]);
    node.put_secrets(&[(key, secret.as_slice())]).await.unwrap();
    files.push(FileEntry { hash: key, ..file("/etc/odd/key|&\\1.pem", "0600", &blob(secret.clone())) });
    entries.push(("/etc/odd/key|&\\1.pem".into(), "0600".into(), secret));

    node.stage(1, "odd", &manifest(files)).await.unwrap();
    node.switch(Some(1), "odd").await.unwrap();
    node.commit(1, &Digest([1; 32]), Some(&record("odd", Digest([2; 32]), 1))).await.unwrap();
    lock.release().await;

    for (path, mode, bytes) in &entries {
        let at = dir.path().join(&path[1..]);
        assert_eq!(&fs::read(&at).unwrap_or_else(|e| panic!("{path:?}: {e}")), bytes, "{path:?}: its bytes");
        let got = fs::metadata(&at).unwrap().permissions().mode() & 0o7777;
        assert_eq!(format!("{got:04o}"), *mode, "{path:?}: its mode");
    }
    // the generation holds these files and nothing else (no blob under its
    // store name, no half-renamed member)
    let files_dir = dir.path().join("var/lib/kdeploy/generations/1/odd/files");
    let mut staged = BTreeSet::new();
    staged_paths(&files_dir, &files_dir, &mut staged);
    let declared: BTreeSet<String> = entries.iter().map(|e| e.0.clone()).collect();
    assert_eq!(staged, declared);

    let st = node.status_verified().await.unwrap();
    assert!(st.drift.is_empty(), "drift right after staging: {:?}", st.drift);
    // a hand edit through one odd name is found, and only it
    let edited = &entries[13].0;
    let at = dir.path().join(&edited[1..]);
    fs::remove_file(&at).unwrap();
    fs::write(&at, "edited by hand\n").unwrap();
    let drift = node.status_verified().await.unwrap().drift;
    assert_eq!(drift.iter().map(|d| d.what.as_str()).collect::<Vec<_>>(), [edited.as_str()], "{drift:?}");
}
