//! Artifacts over HTTP against a real server on loopback that the test
//! starts (`tests/support/http/range_server.py`: Range support, a request log, and
//! a response cut half-way on demand). What a user relies on: every
//! artifact is fetched once however many nodes name it, and never again
//! on the next run; a transfer cut half-way resumes from where it stopped;
//! a wrong checksum, a 404 or a dead server stops with the artifact, the
//! URL (and both checksums) named and nothing unverified in the store;
//! and a cluster that names only a version, with `download.filesRepo`
//! and `download.checksums`, gets its etcd from a mirror laid out like
//! Kubespray's files_repo, members extracted from the release tarball;
//! in a cluster mixing amd64 and arm64 nodes each node gets the build of
//! its architecture; a mirror that hangs mid-transfer is given up on after
//! the download timeout, and `switch` stops before reaching any node.

use crate::support;
use support::http::Server;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use kdeploy::closure::Artifact;
use kdeploy::store::http::{HttpFetcher, Retry};
use kdeploy::store::{Resolver, Store};
use sha2::{Digest as _, Sha256};

struct Fixture {
    dir: tempfile::TempDir,
}

impl Fixture {
    fn new() -> Fixture {
        let f = Fixture { dir: tempfile::tempdir().unwrap() };
        std::fs::create_dir_all(f.served()).unwrap();
        f
    }

    fn served(&self) -> PathBuf {
        self.dir.path().join("www")
    }

    /// A file served at `name`; returns its sha256.
    fn serve(&self, name: &str, bytes: &[u8]) -> String {
        let path = self.served().join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, bytes).unwrap();
        hex::encode(Sha256::digest(bytes))
    }

    fn resolver(&self) -> Resolver {
        let state = self.dir.path().join("project/.kdeploy");
        let retry = Retry { attempts: 3, first_pause: Duration::from_millis(50) };
        let fetcher = HttpFetcher::new(state.join("downloads/.partial"), retry, Duration::from_secs(2));
        Resolver::new(self.dir.path().join("project"), Store::new(state.join("store")), Box::new(fetcher))
    }

    fn store(&self) -> Store {
        Store::new(self.dir.path().join("project/.kdeploy/store"))
    }
}

fn artifact(name: &str, url: String, sha256: &str) -> Artifact {
    Artifact { member: None, name: name.into(), sha256: sha256.into(), url }
}

fn bytes(n: usize, seed: u8) -> Vec<u8> {
    (0..n).map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed)).collect()
}

#[test]
fn each_artifact_is_fetched_once_across_nodes_and_runs() {
    let f = Fixture::new();
    let etcd = f.serve("github.com/etcd-io/etcd/etcd.tar.gz", &bytes(3 << 20, 1));
    let kubelet = f.serve("dl.k8s.io/kubelet", &bytes(2 << 20, 2));
    let server = Server::start(f.dir.path(), &f.served(), &[]);
    let a = artifact("etcd", server.url("github.com/etcd-io/etcd/etcd.tar.gz"), &etcd);
    let b = artifact("kubelet", server.url("dl.k8s.io/kubelet"), &kubelet);
    // five nodes naming the same two artifacts
    let wanted: Vec<&Artifact> = (0..5).flat_map(|_| [&a, &b]).collect();
    let got = f.resolver().fetch_all(&wanted, 4, &kdeploy::store::Quiet).unwrap();
    assert_eq!(got.cached, 0);
    assert_eq!(got.fetched.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>(), ["etcd", "kubelet"]);
    assert_eq!(got.fetched[0].1, 3 << 20);
    assert_eq!(server.requests().len(), 2, "{:?}", server.requests());
    assert!(f.store().by_sha256(&etcd).is_some() && f.store().by_sha256(&kubelet).is_some());

    // the next run finds both in the store and asks the server nothing
    let again = f.resolver().fetch_all(&wanted, 4, &kdeploy::store::Quiet).unwrap();
    assert_eq!((again.cached, again.fetched.len()), (2, 0));
    assert_eq!(server.requests().len(), 2);
}

#[test]
fn a_tarball_labelled_content_encoding_gzip_is_stored_as_served() {
    // web servers often label .tar.gz files so; the checksum is of the file itself
    let f = Fixture::new();
    let tarball = etcd_tarball("3.4.23", "amd64", b"etcd\n", b"etcdctl\n");
    let sha = f.serve("etcd.tar.gz", &tarball);
    let server = Server::start(f.dir.path(), &f.served(), &["gzip:etcd.tar.gz"]);
    let a = artifact("etcd", server.url("etcd.tar.gz"), &sha);
    let got = f.resolver().fetch_all(&[&a], 1, &kdeploy::store::Quiet).unwrap();
    assert_eq!(got.fetched, [("etcd".to_string(), tarball.len() as u64)]);
}

#[test]
fn a_transfer_cut_half_way_resumes_where_it_stopped() {
    let f = Fixture::new();
    let data = bytes(4 << 20, 3);
    let sha = f.serve("containerd.tar.gz", &data);
    let server = Server::start(f.dir.path(), &f.served(), &["containerd.tar.gz"]);
    let a = artifact("containerd", server.url("containerd.tar.gz"), &sha);
    let got = f.resolver().fetch_all(&[&a], 1, &kdeploy::store::Quiet).unwrap();
    assert_eq!(got.fetched, [("containerd".to_string(), data.len() as u64)]);
    let reqs = server.requests();
    assert_eq!(reqs.len(), 2, "{reqs:?}");
    assert_eq!(reqs[0], "/containerd.tar.gz -");
    // the second request asks only for what the first did not bring
    assert_eq!(reqs[1], format!("/containerd.tar.gz bytes={}-", data.len() / 2), "{reqs:?}");
    let d = f.store().by_sha256(&sha).unwrap();
    assert_eq!(std::fs::read(f.store().blob_path(&d)).unwrap(), data);
}

#[test]
fn a_wrong_checksum_or_a_missing_file_stops_with_nothing_stored() {
    let f = Fixture::new();
    let sha = f.serve("runc", b"the real runc\n");
    let server = Server::start(f.dir.path(), &f.served(), &[]);
    let wrong = "0".repeat(64);
    let bad = artifact("runc", server.url("runc"), &wrong);
    let gone = artifact("crictl", server.url("crictl.tar.gz"), &"1".repeat(64));
    let err = f.resolver().fetch_all(&[&bad, &gone], 2, &kdeploy::store::Quiet).unwrap_err();
    assert!(matches!(&err, kdeploy::store::Error::Artifacts(all) if all.len() == 2), "{err:?}");
    let err = err.to_string();
    // both reported, each with what to look at
    assert!(err.contains("artifact runc: checksum mismatch") && err.contains(&server.url("runc")), "{err}");
    assert!(err.contains(&wrong) && err.contains(&sha), "both checksums: {err}");
    assert!(
        err.contains("artifact crictl") && err.contains(&server.url("crictl.tar.gz")) && err.contains("404"),
        "{err}"
    );
    assert!(f.store().by_sha256(&sha).is_none() && f.store().by_sha256(&wrong).is_none());
    // a 404 is not retried
    assert_eq!(server.requests().iter().filter(|r| r.starts_with("/crictl")).count(), 1);
}

#[test]
fn a_dead_server_is_retried_then_named() {
    let f = Fixture::new();
    // a port nothing listens on: bind one, note it, let it go
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let a = artifact("etcd", format!("http://127.0.0.1:{port}/etcd.tar.gz"), &"2".repeat(64));
    let t = Instant::now();
    let err = f.resolver().fetch_all(&[&a], 1, &kdeploy::store::Quiet).unwrap_err().to_string();
    assert!(err.contains("artifact etcd: cannot fetch http://127.0.0.1:"), "{err}");
    assert!(err.contains("after 3 attempts"), "{err}");
    assert!(t.elapsed() >= Duration::from_millis(150), "the pauses between attempts: {:?}", t.elapsed());
}

/// A release tarball as etcd publishes it: `etcd-v<V>-linux-<arch>/{etcd,etcdctl}`.
fn etcd_tarball(version: &str, arch: &str, etcd: &[u8], etcdctl: &[u8]) -> Vec<u8> {
    let gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    let mut tar = tar::Builder::new(gz);
    for (name, data) in [("etcd", etcd), ("etcdctl", etcdctl)] {
        let mut h = tar::Header::new_gnu();
        h.set_size(data.len() as u64);
        h.set_mode(0o755);
        h.set_cksum();
        tar.append_data(&mut h, format!("etcd-v{version}-linux-{arch}/{name}"), data).unwrap();
    }
    tar.into_inner().unwrap().finish().unwrap()
}

#[test]
fn a_cluster_naming_only_a_version_fetches_from_a_files_repo_mirror() {
    let f = Fixture::new();
    let tarball = etcd_tarball("3.4.23", "amd64", b"etcd built for the test\n", b"etcdctl built for the test\n");
    let sha =
        f.serve("files/github.com/etcd-io/etcd/releases/download/v3.4.23/etcd-v3.4.23-linux-amd64.tar.gz", &tarball);
    let server = Server::start(f.dir.path(), &f.served(), &[]);
    // the lab cluster with etcd no longer a local file: only its version
    let lab =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/clusters/lab-etcd.nix")).unwrap();
    let mut text: String = lab.lines().filter(|l| !l.contains("= \"/usr/bin/etcd")).map(|l| format!("{l}\n")).collect();
    let extra = format!(
        "    download.filesRepo = \"{}\";\n    download.checksums.etcd.amd64.\"3.4.23\" = \"sha256:{sha}\";\n    kdeploy.generateOnly",
        server.url("files")
    );
    text = text.replacen("    kdeploy.generateOnly", &extra, 1);
    let project = f.dir.path().join("project");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::write(project.join("lab.nix"), text).unwrap();

    let (code, out, err) = support::closures::kdeploy(&["fetch", "lab.nix"], &project);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("1 artifact(s): 1 fetched"), "{out}");
    let want = "/files/github.com/etcd-io/etcd/releases/download/v3.4.23/etcd-v3.4.23-linux-amd64.tar.gz -";
    assert_eq!(server.requests(), [want], "one download, at the mirror's path for the upstream URL");
    // the node gets the member, not the archive
    let (code, etcd, err) = support::closures::kdeploy(
        &["eval", "lab.nix", "--node", "k8s-master", "--file", "/usr/local/bin/etcd"],
        &project,
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(etcd, "etcd built for the test\n");
    // the next run asks the mirror nothing
    let (code, out, _) = support::closures::kdeploy(&["fetch", "lab.nix"], &project);
    assert_eq!(code, 0);
    assert!(out.contains("0 fetched (0.0 MB), 1 already in the store"), "{out}");
    assert_eq!(server.requests().len(), 1);
}

/// A cluster of its own in `f`'s project: `cp` (amd64) and `arm` (arm64),
/// both etcd members, etcd 3.4.23 from `mirror` with `sums` per arch, the
/// container runtime left out and Kubernetes generate-only (as the lab).
fn mixed_cluster(f: &Fixture, mirror: &str, sums: &[(&str, &str)]) -> PathBuf {
    mixed_cluster_with(f, mirror, sums, "")
}

/// [`mixed_cluster`] with `extra` settings.
fn mixed_cluster_with(f: &Fixture, mirror: &str, sums: &[(&str, &str)], extra: &str) -> PathBuf {
    let sums: String = sums
        .iter()
        .map(|(arch, sha)| format!("    download.checksums.etcd.{arch}.\"3.4.23\" = \"sha256:{sha}\";\n"))
        .collect();
    let text = format!(
        r#"let kd = import <kdeploy>; in
kd.cluster {{
  name = "mixed";
  nodes = {{
    cp = {{ address = "192.0.2.11"; roles = [ "control-plane" "etcd" ]; }};
    arm = {{ address = "192.0.2.12"; roles = [ "worker" "etcd" ]; settings.arch = "arm64"; }};
    arm2 = {{ address = "192.0.2.13"; roles = [ "worker" "etcd" ]; settings.arch = "arm64"; }};
  }};
  settings = {{
    etcd.version = "3.4.23";
    download.filesRepo = "{mirror}";
{sums}{extra}    download.skip = [ "containerd" "containerd-shim-runc-v2" "ctr" "runc" "crictl" ];
    kdeploy.generateOnly = [ "kubelet" "control-plane" "cni" "addons" "resolvconf" ];
  }};
}}
"#
    );
    let project = f.dir.path().join("project");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::write(project.join("mixed.nix"), text).unwrap();
    project
}

const ETCD_PATH: &str = "files/github.com/etcd-io/etcd/releases/download/v3.4.23";

#[test]
fn a_mixed_cluster_gets_each_nodes_build_from_the_mirror_once() {
    let f = Fixture::new();
    let amd = f.serve(
        &format!("{ETCD_PATH}/etcd-v3.4.23-linux-amd64.tar.gz"),
        &etcd_tarball("3.4.23", "amd64", b"etcd for amd64\n", b"etcdctl for amd64\n"),
    );
    let arm = f.serve(
        &format!("{ETCD_PATH}/etcd-v3.4.23-linux-arm64.tar.gz"),
        &etcd_tarball("3.4.23", "arm64", b"etcd for arm64\n", b"etcdctl for arm64\n"),
    );
    let server = Server::start(f.dir.path(), &f.served(), &[]);
    let project = mixed_cluster(&f, &server.url("files"), &[("amd64", &amd), ("arm64", &arm)]);

    let (code, out, err) = support::closures::kdeploy(&["fetch", "mixed.nix"], &project);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("2 artifact(s): 2 fetched"), "{out}");
    let mut asked = server.requests();
    asked.sort();
    assert_eq!(
        asked,
        [
            format!("/{ETCD_PATH}/etcd-v3.4.23-linux-amd64.tar.gz -"),
            format!("/{ETCD_PATH}/etcd-v3.4.23-linux-arm64.tar.gz -")
        ],
        "one download per architecture, however many nodes of it"
    );
    for (node, want) in [("cp", "etcd for amd64\n"), ("arm", "etcd for arm64\n"), ("arm2", "etcd for arm64\n")] {
        let (code, etcd, err) = support::closures::kdeploy(
            &["eval", "mixed.nix", "--node", node, "--file", "/usr/local/bin/etcd"],
            &project,
        );
        assert_eq!(code, 0, "{err}");
        assert_eq!(etcd, want, "{node} gets the build of its architecture");
    }
}

#[test]
fn a_mirror_that_hangs_mid_transfer_is_given_up_on_after_the_timeout() {
    let f = Fixture::new();
    let sha = f.serve("etcd.tar.gz", &bytes(200_000, 5));
    let server = Server::start(f.dir.path(), &f.served(), &["stall:etcd.tar.gz"]);
    let a = artifact("etcd", server.url("etcd.tar.gz"), &sha);
    let retry = Retry { attempts: 2, first_pause: Duration::from_millis(50) };
    let state = f.dir.path().join("project/.kdeploy");
    let fetcher = HttpFetcher::new(state.join("downloads/.partial"), retry, Duration::from_secs(1));
    let resolver = Resolver::new(f.dir.path().join("project"), f.store(), Box::new(fetcher));
    let t = Instant::now();
    let err = resolver.fetch_all(&[&a], 1, &kdeploy::store::Quiet).unwrap_err().to_string();
    assert!(t.elapsed() < Duration::from_secs(20), "gave up only after {:?}", t.elapsed());
    assert!(err.contains(&format!("artifact etcd: cannot fetch {}", a.url)), "{err}");
    assert!(err.to_lowercase().contains("timeout") || err.to_lowercase().contains("timed out"), "{err}");
    assert!(err.contains("after 2 attempts"), "{err}");
    assert!(f.store().by_sha256(&sha).is_none(), "nothing half-fetched is stored");
    assert_eq!(server.requests().len(), 2, "{:?}", server.requests());
}

#[test]
fn switch_stops_before_any_node_when_the_mirror_hangs_or_lies() {
    let f = Fixture::new();
    let tarball = etcd_tarball("3.4.23", "amd64", b"etcd\n", b"etcdctl\n");
    let amd = f.serve(&format!("{ETCD_PATH}/etcd-v3.4.23-linux-amd64.tar.gz"), &tarball);
    let server = Server::start(f.dir.path(), &f.served(), &["stall:etcd-v3.4.23-linux-amd64.tar.gz"]);
    // arm64's file is not what the cluster's checksum says: refused, reported with the hang
    let arm = f.serve(
        &format!("{ETCD_PATH}/etcd-v3.4.23-linux-arm64.tar.gz"),
        &etcd_tarball("3.4.23", "arm64", b"tampered\n", b"etcdctl\n"),
    );
    let project = mixed_cluster(&f, &server.url("files"), &[("amd64", &amd), ("arm64", &"3".repeat(64))]);
    let t = Instant::now();
    let (code, out, err) = support::closures::kdeploy(&["switch", "mixed.nix", "--download-timeout", "1"], &project);
    assert_eq!(code, 1, "{out}{err}");
    assert!(t.elapsed() < Duration::from_secs(60), "{:?}", t.elapsed());
    let amd_url = server.url(&format!("{ETCD_PATH}/etcd-v3.4.23-linux-amd64.tar.gz"));
    let arm_url = server.url(&format!("{ETCD_PATH}/etcd-v3.4.23-linux-arm64.tar.gz"));
    assert!(err.contains(&format!("artifact etcd-v3.4.23-linux-amd64.tar.gz: cannot fetch {amd_url}")), "{err}");
    let mismatch = format!(
        "artifact etcd-v3.4.23-linux-arm64.tar.gz: checksum mismatch for {arm_url}: expected sha256 {}, got {arm}",
        "3".repeat(64)
    );
    assert!(err.contains(&mismatch), "{err}");
    // the nodes are TEST-NET addresses: had switch gone on, it would say it could not reach them
    assert!(!err.contains("192.0.2."), "no node was contacted: {err}");
}

#[test]
fn the_clusters_proxy_carries_downloads_unless_the_environment_names_one() {
    let f = Fixture::new();
    let mut sums = Vec::new();
    for arch in ["amd64", "arm64"] {
        let tarball = etcd_tarball("3.4.23", arch, b"etcd\n", b"etcdctl\n");
        sums.push((arch, f.serve(&format!("{ETCD_PATH}/etcd-v3.4.23-linux-{arch}.tar.gz"), &tarball)));
    }
    let files = Server::start(f.dir.path(), &f.served(), &[]);
    let proxy = Server::proxy(f.dir.path(), &files);
    let sums: Vec<(&str, &str)> = sums.iter().map(|(a, s)| (*a, s.as_str())).collect();
    // a host this machine cannot resolve: only the proxy can reach it
    let project = mixed_cluster_with(
        &f,
        "http://files.invalid/files",
        &sums,
        &format!("    proxy.http = \"http://127.0.0.1:{}\";\n", proxy.port()),
    );

    // the environment's proxy wins: here one that nothing listens on
    let dead = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let fetch = |env_proxy: Option<(&str, String)>| {
        let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_kdeploy"));
        c.args(["fetch", "mixed.nix", "--download-timeout", "2"]).current_dir(&project);
        for var in
            ["ALL_PROXY", "all_proxy", "HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "NO_PROXY", "no_proxy"]
        {
            c.env_remove(var);
        }
        if let Some((var, p)) = env_proxy {
            c.env(var, p);
        }
        let out = c.output().unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (code, _, err) = fetch(Some(("HTTP_PROXY", format!("http://127.0.0.1:{dead}"))));
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("cannot fetch http://files.invalid/files/"), "{err}");
    assert!(proxy.requests().is_empty(), "{:?}", proxy.requests());
    let (code, out, err) = fetch(None);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("2 artifact(s): 2 fetched"), "{out}");
    assert_eq!(proxy.requests(), ["CONNECT files.invalid:80", "CONNECT files.invalid:80"]);
    assert_eq!(files.requests().len(), 2, "{:?}", files.requests());

    // an https proxy in the environment does not carry http:// URLs (a fresh store, the
    // mirror on loopback, no cluster proxy)
    mixed_cluster(&f, &files.url("files"), &sums);
    let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_kdeploy"));
    c.args(["fetch", "mixed.nix", "--store", "other-store"]).current_dir(&project);
    for var in ["ALL_PROXY", "all_proxy", "HTTP_PROXY", "http_proxy", "NO_PROXY", "no_proxy"] {
        c.env_remove(var);
    }
    let out = c.env("HTTPS_PROXY", format!("http://127.0.0.1:{dead}")).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(files.requests().len(), 4, "{:?}", files.requests());
}

/// A project whose one-node closure downloads `artifacts` (name, url,
/// sha256), evaluated as it is (no stdlib); `kdeploy fetch` run in it with
/// `env`: (exit code, stderr).
fn fetch_cli(dir: &Path, artifacts: &[(&str, &str, &str)], env: &[(&str, &str)]) -> (i32, String) {
    let files: Vec<serde_json::Value> = artifacts
        .iter()
        .map(|(name, url, sha)| {
            serde_json::json!({"group": "root", "mode": "0755", "owner": "root", "path": format!("/opt/{name}"),
                "source": {"artifact": {"member": null, "name": name, "sha256": sha, "url": url}}})
        })
        .collect();
    support::closures::write_raw_project(dir, &support::closures::one_phase(files.into()));
    let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_kdeploy"));
    c.args(["fetch", "c.nix", "--download-timeout", "2"]).current_dir(dir).env_remove("KDEPLOY_STDLIB");
    for (k, v) in env {
        c.env(k, v);
    }
    let out = c.output().unwrap();
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stderr).into_owned())
}

/// Every file below `dir` with its size.
fn sizes_below(dir: &Path) -> Vec<(PathBuf, u64)> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                todo.push(p);
            } else {
                out.push((p.clone(), e.metadata().unwrap().len()));
            }
        }
    }
    out
}

#[test]
fn a_download_larger_than_the_limit_is_refused_and_nothing_kept() {
    let f = Fixture::new();
    let sha = f.serve("announced.bin", &bytes(3 << 20, 5));
    // (another checksum: artifacts are fetched once per checksum)
    let sha2 = f.serve("unannounced.bin", &bytes(3 << 20, 6));
    let server = Server::start(f.dir.path(), &f.served(), &["nolength:unannounced.bin"]);
    let (a, b) = (server.url("announced.bin"), server.url("unannounced.bin"));
    let project = f.dir.path().join("cli");
    let limit = [("KDEPLOY_MAX_DOWNLOAD", "1048576")];
    let (code, err) = fetch_cli(&project, &[("announced", &a, &sha), ("unannounced", &b, &sha2)], &limit);
    assert_eq!(code, 1, "{err}");
    // announced by Content-Length: refused before the body; else stopped at the limit
    assert!(err.contains("artifact announced") && err.contains("3145728 bytes"), "{err}");
    assert!(err.contains("artifact unannounced") && err.contains("more than 1048576 bytes"), "{err}");
    assert!(err.contains("KDEPLOY_MAX_DOWNLOAD"), "the limit's knob is named: {err}");
    let kept = sizes_below(&project.join(".kdeploy"));
    assert!(kept.iter().all(|(_, n)| *n <= 1 << 20), "{kept:?}");
    assert!(!kept.iter().any(|(p, _)| p.to_string_lossy().contains("/blobs/")), "{kept:?}");
    // one attempt each: a limit is not a transient failure
    assert_eq!(server.requests().len(), 2, "{:?}", server.requests());

    // within the (default) limit: fetched
    let (code, err) = fetch_cli(&project, &[("announced", &a, &sha), ("unannounced", &b, &sha2)], &[]);
    assert_eq!(code, 0, "{err}");
}

#[test]
fn credentials_in_a_download_url_are_never_printed() {
    let f = Fixture::new();
    let server = Server::start(f.dir.path(), &f.served(), &[]);
    let url = format!("http://mirror-user:s3cr3t-pw@127.0.0.1:{}/missing.tar.gz", server.port());
    let (code, err) = fetch_cli(&f.dir.path().join("cli"), &[("missing", &url, &"1".repeat(64))], &[]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("missing.tar.gz") && err.contains("404"), "{err}");
    assert!(!err.contains("s3cr3t-pw"), "the password was printed: {err}");
}
