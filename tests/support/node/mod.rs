//! Helpers shared by the node and transport tests: blobs with their hashes,
//! manifests, and access to the lab (`lab/lab.sh`): its key, known_hosts and
//! node addresses, and the rule "lab down: skip, or fail under CI".

#![allow(dead_code)]

pub mod etcd_writer;
pub mod lab_check;
pub mod lab_project;
pub mod lane;
pub mod link;
pub mod service_prober;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

use kdeploy::node::{FileEntry, Manifest, Node, NodeError, NodeLock, PhaseEntry, PhaseRecord, WantedBlob};
use kdeploy::store::Digest;
use kdeploy::transport::{HostKeyPolicy, SshAuth, SshHost, SshOptions};
use sha2::Digest as _;

/// A blob: bytes, blake3 hex, sha256 hex.
pub struct Blob {
    pub bytes: Vec<u8>,
    pub b3: Digest,
    pub sha: String,
}

pub fn blob(bytes: impl Into<Vec<u8>>) -> Blob {
    let bytes = bytes.into();
    let b3 = Digest::of(&bytes);
    let sha = hex::encode(sha2::Sha256::digest(&bytes));
    Blob { bytes, b3, sha }
}

pub fn file(path: &str, mode: &str, b: &Blob) -> FileEntry {
    FileEntry { path: path.into(), mode: mode.into(), owner: "root".into(), group: "root".into(), hash: b.b3 }
}

/// What `have` checks a node's copy of `b` against: size and sha256.
pub fn wanted(b: &Blob) -> WantedBlob {
    WantedBlob { hash: b.b3, size: b.bytes.len() as u64, sha256: Some(b.sha.clone()) }
}

/// Take the node's lock for a test (what a run does first; the commands
/// that change a node are refused without it), waiting while another test
/// on the same lab node holds it.
pub async fn hold(node: &Node<'_>, owner: &str) -> NodeLock {
    let deadline = std::time::Instant::now() + Duration::from_secs(300);
    loop {
        match node.lock(owner).await {
            Ok(l) => return l,
            Err(NodeError::Locked { .. }) if std::time::Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(200)).await
            }
            Err(e) => panic!("taking the node lock: {e}"),
        }
    }
}

/// Push the blobs the node lacks.
pub async fn push(node: &Node<'_>, blobs: &[&Blob]) {
    let hashes: Vec<WantedBlob> = blobs.iter().map(|b| wanted(b)).collect();
    let missing = node.missing(&hashes).await.unwrap();
    for b in blobs {
        if missing.contains(&b.b3) {
            node.put_bytes(&b.b3, &b.sha, &b.bytes).await.unwrap();
        }
    }
}

/// A phase record of one active phase, for `commit`.
pub fn record(phase: &str, hash: Digest, generation: u64) -> PhaseRecord {
    [(phase.to_string(), PhaseEntry { hash, generation, active: true })].into()
}

pub fn manifest(files: Vec<FileEntry>) -> Manifest {
    Manifest { files, ..Default::default() }
}

pub use super::repo;

pub fn lab_dir() -> PathBuf {
    std::env::var_os("KDEPLOY_LAB_DIR").map(PathBuf::from).unwrap_or_else(|| repo().join(".lab"))
}

/// Is the lab up: booted with some nodes, each node's nspawn process
/// running? Checked once per test binary, from the lab's own files and
/// /proc, not `lab.sh status`, which also wants every node's sshd to answer
/// within 3 s: on a machine loaded with the other tests and a cold build
/// one did not, and every Kubernetes test failed as "the lab is not up".
/// Down: panics under CI, otherwise says so and the test returns early.
pub fn lab_up() -> bool {
    static UP: OnceLock<bool> = OnceLock::new();
    let up = *UP.get_or_init(|| {
        let n = lab_nodes();
        let running = |i: u32| {
            let pid = std::fs::read_to_string(lab_dir().join(format!("run/kdnode{i}.pid"))).unwrap_or_default();
            !pid.trim().is_empty() && Path::new("/proc").join(pid.trim()).exists()
        };
        n > 0 && (1..=n).all(running)
    });
    if !up {
        if std::env::var_os("CI").is_some() {
            panic!("the lab is not up (CI is set): run `lab/lab.sh up 3` first");
        }
        eprintln!("SKIPPED: the lab is not up (`lab/lab.sh up 3`); set CI=1 to make this a failure");
    }
    up
}

/// How many nodes the lab was booted with (`lab/lab.sh up N`), 0 when down.
pub fn lab_nodes() -> u32 {
    std::fs::read_to_string(lab_dir().join("lab.env"))
        .ok()
        .and_then(|t| t.lines().find_map(|l| l.strip_prefix("N=")?.trim().parse().ok()))
        .unwrap_or(0)
}

/// A test that needs `n` lab nodes: true when the lab has them; otherwise
/// a failure under CI, or a note and false.
pub fn lab_has(n: u32) -> bool {
    if !lab_up() {
        return false;
    }
    if lab_nodes() >= n {
        return true;
    }
    if std::env::var_os("CI").is_some() {
        panic!("this test needs {n} lab nodes (CI is set): run `lab/lab.sh up {n}` first");
    }
    eprintln!("SKIPPED: this test needs {n} lab nodes (`lab/lab.sh up {n}`)");
    false
}

/// The lab's secret store (its etcd PKI and tokens): what `kdeploy
/// switch tests/clusters/lab-etcd.nix` makes by default. Lab tests that switch copies
/// of the lab cluster from temporary projects point `KDEPLOY_SECRETS` here,
/// so every run deploys the same PKI instead of a new one per project.
/// Lane B (`lane.rs`: other addresses, so other certificates) has its own.
pub fn lab_secrets() -> PathBuf {
    match lane::offset() {
        0 => repo().join("clusters/.kdeploy/secrets"),
        lane::B => lab_dir().join("secrets-lane-b"),
        _ => lab_dir().join("secrets-lane-c"),
    }
}

/// The lab's nodes are shared: a test that changes nodes first takes them,
/// so tests on the same nodes run one at a time and tests on disjoint nodes
/// (the Kubernetes tests on kdnode4-8, the etcd tests on kdnode1-3 and
/// 9-10) may run at once. Within one test binary each node is a mutex (a
/// poisoned lock is still a lock); across processes an exclusive `flock`
/// on `.lab/tests.lock.N`. All of a test's nodes or none: a test waiting
/// for kdnode1-3 and 9-10 holds none of them meanwhile, so the tests on
/// kdnode1-3 go on. Released when the guard drops, which appends a line
/// to `.lab/holds.log` (test, nodes, seconds waited, seconds held): where
/// the lab tests' time goes, the input for spreading them over the nodes.
pub struct LabGuard {
    _files: Vec<std::fs::File>,
    _mutexes: Vec<std::sync::MutexGuard<'static, ()>>,
    hold: Option<Hold>,
}

/// Who held which nodes, since when, after waiting how long.
struct Hold {
    test: String,
    nodes: Vec<u32>,
    waited: Duration,
    since: std::time::Instant,
}

impl Drop for LabGuard {
    fn drop(&mut self) {
        let Some(h) = self.hold.take() else { return };
        let nodes: Vec<String> = h.nodes.iter().map(|n| n.to_string()).collect();
        let line = format!(
            "{}\tnodes {}\twaited {:.1}s\theld {:.1}s\n",
            h.test,
            nodes.join(","),
            h.waited.as_secs_f64(),
            h.since.elapsed().as_secs_f64()
        );
        use std::io::Write as _;
        if let Ok(mut f) = std::fs::OpenOptions::new().create(true).append(true).open(lab_dir().join("holds.log")) {
            let _ = f.write_all(line.as_bytes());
        }
    }
}

/// The etcd lab on kdnode1-3 (tests/clusters/lab-etcd.nix as written):
/// for the tests that use that file itself or address nodes their own way.
pub fn lab_lock() -> LabGuard {
    lab_lock_nodes(1..=3)
}

/// The etcd lab in whichever lane is free first (`lane.rs`): kdnode14-16
/// or 11-13 when the lab has them, else kdnode1-3. Lanes C and B are
/// tried first, and lane A not at all while another process keeps it for
/// the tests that can run only there ([`lane_a_kept`]). The test's helpers
/// follow the lane.
pub fn lab_lock_any() -> LabGuard {
    let lanes: Vec<u32> = [lane::C, lane::B].into_iter().filter(|&o| lab_nodes() >= o + 3).chain([0]).collect();
    let choices: Vec<(Vec<u32>, u32)> = lanes.iter().map(|&o| ((1..=3).map(|i| i + o).collect(), o)).collect();
    take_where(&choices, |&(_, offset)| offset != 0 || !lane_a_kept())
}

/// Whether a test process keeps lane A for the tests pinned to it: one
/// started with `KDEPLOY_TEST_KEEP_LANE_A=1` (tests/run-all.sh runs those
/// tests so, beside the others), which holds a shared `flock` on
/// `.lab/lane-a.kept` for its whole life. Without it, tests that could run
/// in any lane took lane A while the pinned ones waited for it, and lane
/// A ended minutes after the others. This process's own keep does not
/// count: its tests may use the lane it keeps.
fn lane_a_kept() -> bool {
    if keeps_lane_a() {
        return false;
    }
    let Ok(file) =
        std::fs::OpenOptions::new().create(true).truncate(false).write(true).open(lab_dir().join("lane-a.kept"))
    else {
        return false;
    };
    matches!(file.try_lock(), Err(std::fs::TryLockError::WouldBlock))
}

/// Takes this process's keep on lane A when its environment asks for one
/// (see [`lane_a_kept`]); true while it is held.
fn keeps_lane_a() -> bool {
    static KEEP: OnceLock<Option<std::fs::File>> = OnceLock::new();
    KEEP.get_or_init(|| {
        std::env::var_os("KDEPLOY_TEST_KEEP_LANE_A")?;
        let _ = std::fs::create_dir_all(lab_dir());
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(lab_dir().join("lane-a.kept"))
            .ok()?;
        file.lock_shared().ok()?;
        Some(file)
    })
    .is_some()
}

/// The Kubernetes lab (kdnode4-8) in whichever lane is free first:
/// kdnode17-21 when the lab has them, else kdnode4-8. The test's helpers
/// follow the lane.
pub fn lab_lock_k8s() -> LabGuard {
    let lanes: Vec<u32> = [lane::C].into_iter().filter(|&o| lab_nodes() >= o + 8).chain([0]).collect();
    lab_lock_lanes(&lanes, 4..=8)
}

/// The etcd lab's two spare nodes, kdnode9 and kdnode10 (10.77.0.19-20):
/// what the tests that grow the etcd lab add to it, apart from the
/// Kubernetes tests' kdnode4-8 so that neither waits for the other.
pub const SPARE: [u32; 2] = [9, 10];

/// Takes lab nodes `nodes` (1-based, as named: lane A) for the guard's lifetime.
pub fn lab_lock_nodes(nodes: impl IntoIterator<Item = u32>) -> LabGuard {
    take(&[(nodes.into_iter().collect(), 0)])
}

/// `nodes` moved by each lane offset of `lanes`: the first free one.
fn lab_lock_lanes(lanes: &[u32], nodes: std::ops::RangeInclusive<u32>) -> LabGuard {
    let choices: Vec<(Vec<u32>, u32)> = lanes.iter().map(|&o| (nodes.clone().map(|i| i + o).collect(), o)).collect();
    take(&choices)
}

/// The first of `choices` (nodes, lane offset) whose nodes are all free,
/// waiting until one is; the test thread's lane is that choice's.
fn take(choices: &[(Vec<u32>, u32)]) -> LabGuard {
    take_where(choices, |_| true)
}

/// [`take`] among the choices `open` admits, asked anew each time round.
fn take_where(choices: &[(Vec<u32>, u32)], open: impl Fn(&(Vec<u32>, u32)) -> bool) -> LabGuard {
    keeps_lane_a();
    const MAX: usize = 64;
    static NODES: [std::sync::Mutex<()>; MAX] = [const { std::sync::Mutex::new(()) }; MAX];
    assert!(choices.iter().flat_map(|c| &c.0).all(|&n| n >= 1 && n as usize <= MAX), "lab nodes are 1..={MAX}");
    let _ = std::fs::create_dir_all(lab_dir());
    let start = std::time::Instant::now();
    loop {
        for (nodes, offset) in choices.iter().filter(|c| open(c)) {
            if let Some(mut guard) = try_lab_nodes(nodes, &NODES) {
                lane::set(*offset);
                let test = std::thread::current().name().unwrap_or("?").to_string();
                let nodes = nodes.clone();
                guard.hold = Some(Hold { test, nodes, waited: start.elapsed(), since: std::time::Instant::now() });
                return guard;
            }
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// Every node of `nodes`, or none (what was taken is let go when the
/// partial guard drops).
fn try_lab_nodes(nodes: &[u32], mutexes: &'static [std::sync::Mutex<()>]) -> Option<LabGuard> {
    let mut guard = LabGuard { _files: Vec::new(), _mutexes: Vec::new(), hold: None };
    for &i in nodes {
        let mutex = match mutexes[i as usize - 1].try_lock() {
            Ok(g) => g,
            Err(std::sync::TryLockError::Poisoned(p)) => p.into_inner(),
            Err(std::sync::TryLockError::WouldBlock) => return None,
        };
        guard._mutexes.push(mutex);
        // no lab directory (the lab is down): the mutexes alone
        let Ok(file) = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(lab_dir().join(format!("tests.lock.{i}")))
        else {
            continue;
        };
        match file.try_lock() {
            Ok(()) => guard._files.push(file),
            Err(std::fs::TryLockError::WouldBlock) => return None,
            Err(std::fs::TryLockError::Error(e)) => panic!("locking lab node {i}: {e}"),
        }
    }
    Some(guard)
}

/// Address of lab node `i` (1-based; 1-3 in the test's lane).
pub fn addr(i: u32) -> String {
    format!("10.77.0.{}", 10 + lane::node(i))
}

pub fn lab_options() -> SshOptions {
    SshOptions {
        user: "root".into(),
        port: 22,
        auth: SshAuth::KeyFile { path: lab_dir().join("id_ed25519"), passphrase: None },
        host_keys: HostKeyPolicy::Strict(lab_dir().join("known_hosts")),
        connect_timeout: Duration::from_secs(10),
        jump: None,
        escalate: None,
        persist: None,
    }
}

pub async fn connect(i: u32) -> SshHost {
    SshHost::connect(&format!("kdnode{}", lane::node(i)), &addr(i), &lab_options()).await.expect("connect to lab node")
}

/// A directory of links to every tool on this machine's PATH but `missing`.
pub fn path_without(dir: &Path, missing: &str) -> String {
    std::fs::create_dir_all(dir).unwrap();
    let path = std::env::var("PATH").unwrap();
    for d in path.split(':') {
        let Ok(entries) = std::fs::read_dir(d) else { continue };
        for e in entries.flatten() {
            let name = e.file_name();
            if name != missing && !dir.join(&name).exists() {
                let _ = std::os::unix::fs::symlink(e.path(), dir.join(&name));
            }
        }
    }
    dir.to_str().unwrap().to_string()
}

/// A local host whose commands find every tool of this machine but `missing`
/// (the directory of links it needs is kept with it).
pub fn local_host_without(missing: &str) -> (tempfile::TempDir, kdeploy::transport::LocalHost) {
    let bin = tempfile::tempdir().unwrap();
    let path = path_without(bin.path(), missing);
    (bin, kdeploy::transport::LocalHost::new("local").with_env("PATH", &path))
}
