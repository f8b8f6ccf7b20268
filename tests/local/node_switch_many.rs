//! A switch of a phase with many files new to the node, against the real
//! node program in a directory on this machine: every managed path becomes
//! its link into the phase (new ones are linked a directory at a time, past
//! one `ln`'s batch of 500), one beside an unmanaged file keeps that file in
//! `displaced/`, and switching the phase away removes them all again.

use crate::support;
use std::fs;

use kdeploy::node::{FileEntry, Node};
use kdeploy::transport::LocalHost;
use support::node::{blob, file, hold, manifest, Blob};

#[tokio::test(flavor = "multi_thread")]
async fn a_phase_of_many_new_files_links_each_path_and_removes_them_again() {
    let dir = tempfile::tempdir().unwrap();
    let prefix = dir.path().to_str().unwrap().to_string();
    let host = LocalHost::new("local");
    let node = Node::install_with_prefix(&host, &prefix).await.unwrap();
    let _lock = hold(&node, "test").await;

    // 620 files in one directory (two batches), three in nested new ones,
    // one at the top, one where an unmanaged file is
    let mut paths: Vec<String> = (0..620).map(|i| format!("/etc/many/f{i}.conf")).collect();
    paths.extend(
        ["/opt/a/b/c/deep.conf", "/opt/a/b/other.conf", "/srv/x.conf", "/top.conf", "/etc/kept.conf"].map(String::from),
    );
    fs::create_dir_all(dir.path().join("etc")).unwrap();
    fs::write(dir.path().join("etc/kept.conf"), "mine\n").unwrap();
    let blobs: Vec<Blob> = paths.iter().map(|p| blob(format!("content of {p}\n"))).collect();
    let put: Vec<kdeploy::node::PutBlob<'_>> = blobs
        .iter()
        .map(|b| kdeploy::node::PutBlob {
            hash: b.b3,
            sha256: kdeploy::node::Sha256::Known(&b.sha),
            body: kdeploy::node::Body::Bytes(&b.bytes),
        })
        .collect();
    node.put(&put).await.unwrap();
    let files: Vec<FileEntry> = paths.iter().zip(&blobs).map(|(p, b)| file(p, "0644", b)).collect();
    node.stage(1, "many", &manifest(files)).await.unwrap();
    node.switch(Some(1), "many").await.unwrap();

    let phase = dir.path().join("var/lib/kdeploy/phases/many/files");
    for p in &paths {
        let at = dir.path().join(&p[1..]);
        assert_eq!(fs::read_link(&at).unwrap(), phase.join(&p[1..]), "{p}: the link");
        assert_eq!(fs::read_to_string(&at).unwrap(), format!("content of {p}\n"), "{p}: the content");
    }
    let displaced = dir.path().join("var/lib/kdeploy/displaced/etc/kept.conf");
    assert_eq!(fs::read_to_string(&displaced).unwrap(), "mine\n");
    // again: nothing to do, the same links
    node.switch(Some(1), "many").await.unwrap();
    assert_eq!(fs::read_link(dir.path().join("top.conf")).unwrap(), phase.join("top.conf"));

    node.switch(None, "many").await.unwrap();
    for p in &paths[..paths.len() - 1] {
        assert!(fs::symlink_metadata(dir.path().join(&p[1..])).is_err(), "{p}: left behind");
    }
    assert_eq!(fs::read_to_string(dir.path().join("etc/kept.conf")).unwrap(), "mine\n", "the original back");
}
