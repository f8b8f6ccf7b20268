//! Artifacts over HTTP against a real server on loopback that the test
//! starts (`tests/http/range_server.py`: Range support, a request log, and
//! a response cut half-way on demand). What a user relies on: every
//! artifact is fetched once however many nodes name it, and never again
//! on the next run; a transfer cut half-way resumes from where it stopped;
//! a wrong checksum, a 404 or a dead server stops with the artifact, the
//! URL (and both checksums) named and nothing unverified in the store;
//! and a cluster that names only a version, with `download.filesRepo`
//! and `download.checksums`, gets its etcd from a mirror laid out like
//! Kubespray's files_repo, members extracted from the release tarball.

mod closures_support;

use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use kdeploy::closure::Artifact;
use kdeploy::store::http::{HttpFetcher, Retry};
use kdeploy::store::{Resolver, Store};
use sha2::{Digest as _, Sha256};

struct Server {
    child: Child,
    port: u16,
    log: PathBuf,
}

impl Server {
    /// Serve `root`, cutting the first response for each of `cut`.
    fn start(dir: &Path, root: &Path, cut: &[&str]) -> Server {
        let log = dir.join("requests.log");
        let port_file = dir.join("port");
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/http/range_server.py");
        let child = Command::new("python3")
            .arg(script)
            .args([root, &log, &port_file])
            .args(cut)
            .spawn()
            .expect("python3 runs the test server");
        let t = Instant::now();
        while !port_file.exists() {
            assert!(t.elapsed() < Duration::from_secs(10), "the test server did not start");
            std::thread::sleep(Duration::from_millis(20));
        }
        let port = std::fs::read_to_string(&port_file).unwrap().trim().parse().unwrap();
        Server { child, port, log }
    }

    fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}/{path}", self.port)
    }

    fn requests(&self) -> Vec<String> {
        std::fs::read_to_string(&self.log).unwrap_or_default().lines().map(str::to_string).collect()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

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
    let got = f.resolver().fetch_all(&wanted, 4, &|_, _| {}).unwrap();
    assert_eq!(got.cached, 0);
    assert_eq!(got.fetched.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>(), ["etcd", "kubelet"]);
    assert_eq!(got.fetched[0].1, 3 << 20);
    assert_eq!(server.requests().len(), 2, "{:?}", server.requests());
    assert!(f.store().by_sha256(&etcd).is_some() && f.store().by_sha256(&kubelet).is_some());

    // the next run finds both in the store and asks the server nothing
    let again = f.resolver().fetch_all(&wanted, 4, &|_, _| {}).unwrap();
    assert_eq!((again.cached, again.fetched.len()), (2, 0));
    assert_eq!(server.requests().len(), 2);
}

#[test]
fn a_transfer_cut_half_way_resumes_where_it_stopped() {
    let f = Fixture::new();
    let data = bytes(4 << 20, 3);
    let sha = f.serve("containerd.tar.gz", &data);
    let server = Server::start(f.dir.path(), &f.served(), &["containerd.tar.gz"]);
    let a = artifact("containerd", server.url("containerd.tar.gz"), &sha);
    let got = f.resolver().fetch_all(&[&a], 1, &|_, _| {}).unwrap();
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
    let err = f.resolver().fetch_all(&[&bad, &gone], 2, &|_, _| {}).unwrap_err().0;
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
    let err = f.resolver().fetch_all(&[&a], 1, &|_, _| {}).unwrap_err().0;
    assert!(err.contains("artifact etcd: cannot fetch http://127.0.0.1:"), "{err}");
    assert!(err.contains("after 3 attempts"), "{err}");
    assert!(t.elapsed() >= Duration::from_millis(150), "the pauses between attempts: {:?}", t.elapsed());
}

/// A release tarball as etcd publishes it: `etcd-v<V>-linux-amd64/{etcd,etcdctl}`.
fn etcd_tarball(version: &str, etcd: &[u8], etcdctl: &[u8]) -> Vec<u8> {
    let gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    let mut tar = tar::Builder::new(gz);
    for (name, data) in [("etcd", etcd), ("etcdctl", etcdctl)] {
        let mut h = tar::Header::new_gnu();
        h.set_size(data.len() as u64);
        h.set_mode(0o755);
        h.set_cksum();
        tar.append_data(&mut h, format!("etcd-v{version}-linux-amd64/{name}"), data).unwrap();
    }
    tar.into_inner().unwrap().finish().unwrap()
}

#[test]
fn a_cluster_naming_only_a_version_fetches_from_a_files_repo_mirror() {
    let f = Fixture::new();
    let tarball = etcd_tarball("3.4.23", b"etcd built for the test\n", b"etcdctl built for the test\n");
    let sha =
        f.serve("files/github.com/etcd-io/etcd/releases/download/v3.4.23/etcd-v3.4.23-linux-amd64.tar.gz", &tarball);
    let server = Server::start(f.dir.path(), &f.served(), &[]);
    // the lab cluster with etcd no longer a local file: only its version
    let lab = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("clusters/lab.nix")).unwrap();
    let mut text: String = lab.lines().filter(|l| !l.contains("= \"/usr/bin/etcd")).map(|l| format!("{l}\n")).collect();
    let extra = format!(
        "    download.filesRepo = \"{}\";\n    download.checksums.etcd.amd64.\"3.4.23\" = \"sha256:{sha}\";\n    kdeploy.generateOnly",
        server.url("files")
    );
    text = text.replacen("    kdeploy.generateOnly", &extra, 1);
    let project = f.dir.path().join("project");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::write(project.join("lab.nix"), text).unwrap();

    let (code, out, err) = closures_support::kdeploy(&["fetch", "lab.nix"], &project);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("1 artifact(s): 1 fetched"), "{out}");
    let want = "/files/github.com/etcd-io/etcd/releases/download/v3.4.23/etcd-v3.4.23-linux-amd64.tar.gz -";
    assert_eq!(server.requests(), [want], "one download, at the mirror's path for the upstream URL");
    // the node gets the member, not the archive
    let (code, etcd, err) = closures_support::kdeploy(
        &["eval", "lab.nix", "--node", "k8s-master", "--file", "/usr/local/bin/etcd"],
        &project,
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(etcd, "etcd built for the test\n");
    // the next run asks the mirror nothing
    let (code, out, _) = closures_support::kdeploy(&["fetch", "lab.nix"], &project);
    assert_eq!(code, 0);
    assert!(out.contains("0 fetched (0.0 MB), 1 already in the store"), "{out}");
    assert_eq!(server.requests().len(), 1);
}
