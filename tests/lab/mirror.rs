//! The lab converged from a files_repo mirror over HTTP (issue 12's "done
//! when"): a copy of the lab cluster that names only versions — no
//! `download.local` — with `download.filesRepo` pointing at a server on
//! loopback that serves etcd's and containerd's release tarballs and runc's
//! binary in Kubespray's files_repo layout. The tarballs are built by the
//! test from the deployer's Debian binaries (the lab has no internet), so
//! the cluster gives their checksums with `download.checksums`. From a
//! reset lab: each file is fetched once, the members extracted on the
//! deployer, the nodes run etcd (mutual TLS, healthy) and containerd from
//! them; the re-run is a no-op that asks the mirror nothing. Ends on the
//! unmodified lab cluster.

use crate::support;
use std::path::{Path, PathBuf};

use sha2::{Digest as _, Sha256};
use support::http::Server;
use support::node::lab_check::assert_deployed;
use support::node::lab_project::*;
use support::node::{lab_lock, lab_up};

const GH: &str = "files/github.com";

/// A .tar.gz of (name in the archive, file on this machine).
fn tarball(out: &Path, members: &[(&str, &str)]) -> String {
    std::fs::create_dir_all(out.parent().unwrap()).unwrap();
    let gz = flate2::write::GzEncoder::new(std::fs::File::create(out).unwrap(), flate2::Compression::fast());
    let mut tar = tar::Builder::new(gz);
    for (name, src) in members {
        tar.append_path_with_name(src, name).unwrap();
    }
    tar.into_inner().unwrap().finish().unwrap();
    sha256(out)
}

fn sha256(path: &Path) -> String {
    hex::encode(Sha256::digest(std::fs::read(path).unwrap()))
}

/// The files_repo tree under `www`; returns the cluster's checksum settings.
fn mirror(www: &Path) -> String {
    let etcd = tarball(
        &www.join(format!("{GH}/etcd-io/etcd/releases/download/v3.4.23/etcd-v3.4.23-linux-amd64.tar.gz")),
        &[("etcd-v3.4.23-linux-amd64/etcd", "/usr/bin/etcd"), ("etcd-v3.4.23-linux-amd64/etcdctl", "/usr/bin/etcdctl")],
    );
    let containerd = tarball(
        &www.join(format!("{GH}/containerd/containerd/releases/download/v1.6.20/containerd-1.6.20-linux-amd64.tar.gz")),
        &[
            ("bin/containerd", "/usr/bin/containerd"),
            ("bin/containerd-shim-runc-v2", "/usr/bin/containerd-shim-runc-v2"),
            ("bin/ctr", "/usr/bin/ctr"),
        ],
    );
    let runc = www.join(format!("{GH}/opencontainers/runc/releases/download/v1.1.5/runc.amd64"));
    std::fs::create_dir_all(runc.parent().unwrap()).unwrap();
    std::fs::copy("/usr/sbin/runc", &runc).unwrap();
    let runc = sha256(&runc);
    format!(
        "download.checksums = {{ etcd.amd64.\"3.4.23\" = \"sha256:{etcd}\"; \
         containerd.amd64.\"1.6.20\" = \"sha256:{containerd}\"; runc.amd64.\"1.1.5\" = \"sha256:{runc}\"; }};"
    )
}

/// tests/clusters/lab-etcd.nix without its download.local block, plus `extra` settings.
fn mirrored_cluster(dir: &Path, extra: &str) -> PathBuf {
    let lab = std::fs::read_to_string(support::node::repo().join("tests/clusters/lab-etcd.nix")).unwrap();
    let start = lab.find("    download.local = {").expect("lab.nix takes its binaries from download.local");
    let end = start + lab[start..].find("\n    };\n").unwrap() + "\n    };\n".len();
    let text = format!("{}    {extra}\n{}", &lab[..start], &lab[end..]);
    assert!(!text.contains("download.local"));
    let f = dir.join("mirrored.nix");
    std::fs::write(&f, text).unwrap();
    f
}

#[test]
fn the_lab_converges_from_a_files_repo_mirror() {
    let _g = lab_lock();
    if !lab_up() {
        return;
    }
    let p = Project::new();
    let www = p.dir.path().join("www");
    let sums = mirror(&www);
    let server = Server::start(p.dir.path(), &www, &[]);
    let cluster = mirrored_cluster(
        p.dir.path(),
        &format!("download.filesRepo = \"{}\"; runc.version = \"1.1.5\"; {sums}", server.url("files")),
    );

    // from nothing: every node reset
    let (out, _) = run(kdeploy_cmd("reset", &p.base(), None, &["--yes"]));
    assert!(out.status.success(), "reset: {}", text(&out));
    assert!(ssh(1, "test -e /usr/local/bin/etcd || echo gone").contains("gone"));

    let (out, j) = switch(&cluster);
    assert!(out.status.success(), "switch from the mirror: {}", text(&out));
    let mut asked = server.requests();
    asked.sort();
    assert_eq!(
        asked,
        [
            format!("/{GH}/containerd/containerd/releases/download/v1.6.20/containerd-1.6.20-linux-amd64.tar.gz -"),
            format!("/{GH}/etcd-io/etcd/releases/download/v3.4.23/etcd-v3.4.23-linux-amd64.tar.gz -"),
            format!("/{GH}/opencontainers/runc/releases/download/v1.1.5/runc.amd64 -"),
        ],
        "each release file fetched once for the three nodes"
    );
    assert!(statuses(&j).iter().all(|(_, s)| s == "changed"), "{j}");
    for i in 1..=3 {
        // the members extracted on the deployer are what runs: the Debian binaries' bytes
        assert_runs_debian_binaries(i);
        assert!(ssh(i, "/usr/local/bin/ctr version").contains("Server:"), "node {i}: containerd answers");
    }
    let health = ssh(1, "set -a; . /etc/etcd.env; /usr/local/bin/etcdctl endpoint health --cluster 2>&1");
    assert_eq!(health.matches("is healthy").count(), 3, "{health}");
    assert_deployed(&cluster);

    // the re-run: nothing changes, the mirror is not asked again
    let (out, j) = switch(&cluster);
    assert!(out.status.success(), "{}", text(&out));
    assert!(statuses(&j).iter().all(|(_, s)| s == "unchanged"), "{j}");
    assert_eq!(server.requests().len(), 3, "{:?}", server.requests());

    p.restore();
}
