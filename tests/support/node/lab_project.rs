//! A lab test's project and its `kdeploy` runs: a temp project holding
//! copies of tests/clusters/lab-etcd.nix (so its own .kdeploy history) and variants
//! of it, the `kdeploy` command with the lab's key and known_hosts, and
//! ways to look at a node (over SSH, or inside it without SSH).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use super::lab_check::assert_deployed;
use super::repo;

/// `kdeploy SUB CLUSTER` for the lab. The tests run without a terminal:
/// `switch`, `rollback` and `reset` get `--yes` (a plan that resets,
/// prunes, removes members or drains is refused without it), except
/// through [`unconfirmed`], which tests that refusal.
pub fn kdeploy_cmd(sub: &str, cluster: &Path, known_hosts: Option<&Path>, extra: &[&str]) -> Command {
    let mut c = unconfirmed(sub, cluster, known_hosts, extra);
    if needs_yes(sub, extra) {
        c.arg("--yes");
    }
    c
}

/// Whether `kdeploy SUB EXTRA` run without a terminal needs `--yes` added
/// to go on with a plan that asks (and does not have it).
pub fn needs_yes(sub: &str, extra: &[&str]) -> bool {
    matches!(sub, "switch" | "rollback" | "reset") && !extra.contains(&"--yes")
}

/// [`kdeploy_cmd`] without the consent `--yes` gives.
pub fn unconfirmed(sub: &str, cluster: &Path, known_hosts: Option<&Path>, extra: &[&str]) -> Command {
    let lab = repo().join(".lab");
    let kh = known_hosts.map_or(lab.join("known_hosts"), Path::to_path_buf);
    let mut c = Command::new(env!("CARGO_BIN_EXE_kdeploy"));
    c.arg(sub)
        .arg(cluster)
        .args(["--ssh-key", lab.join("id_ed25519").to_str().unwrap()])
        .args(["--known-hosts", kh.to_str().unwrap()])
        .args(["--output", "json", "--connect-timeout", "3"])
        .env("KDEPLOY_SECRETS", super::lab_secrets())
        .args(extra);
    c
}

pub fn run(mut c: Command) -> (Output, serde_json::Value) {
    let out = c.output().unwrap();
    let json = serde_json::from_slice(&out.stdout).unwrap_or(serde_json::Value::Null);
    (out, json)
}

pub fn switch(cluster: &Path) -> (Output, serde_json::Value) {
    run(kdeploy_cmd("switch", cluster, None, &[]))
}

pub use crate::support::text;

/// `cmd` run as root inside lab node `i` (`lab.sh exec`, not SSH: the
/// look at a node stays possible while its sshd refuses root); stdout and
/// stderr.
pub fn ssh(i: u32, cmd: &str) -> String {
    let i = super::lane::node(i);
    let out = Command::new(repo().join("lab/lab.sh")).args(["exec", &i.to_string(), cmd]).output().unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr)
}

/// Node `i` runs the deployer's Debian etcd, containerd and runc (by
/// sha256), and etcd and containerd are active.
pub fn assert_runs_debian_binaries(i: u32) {
    use sha2::Digest as _;
    let sums = ssh(i, "sha256sum /usr/local/bin/etcd /usr/local/bin/containerd /usr/local/bin/runc");
    for (node_path, local) in [
        ("/usr/local/bin/etcd", "/usr/bin/etcd"),
        ("/usr/local/bin/containerd", "/usr/bin/containerd"),
        ("/usr/local/bin/runc", "/usr/sbin/runc"),
    ] {
        let want = hex::encode(sha2::Sha256::digest(std::fs::read(local).unwrap()));
        assert!(sums.contains(&format!("{want}  {node_path}")), "node {i}: {sums}");
    }
    assert_eq!(ssh(i, "systemctl is-active etcd containerd").trim(), "active\nactive", "node {i}");
}

/// Bytes the host has sent into the lab bridge (to the nodes, and to a
/// cache on it): what left the deployer, counted by the kernel.
pub fn bridge_tx() -> u64 {
    std::fs::read_to_string("/sys/class/net/kdbr0/statistics/tx_bytes").unwrap().trim().parse().unwrap()
}

/// `transfer.KEY` of a JSON recap.
pub fn transfer(j: &serde_json::Value, key: &str) -> u64 {
    j["transfer"][key].as_u64().unwrap_or_else(|| panic!("recap transfer.{key}: {j}"))
}

pub fn active_since(i: u32, unit: &str) -> String {
    ssh(i, &format!("systemctl show -p ActiveEnterTimestampMonotonic {unit}"))
}

pub fn config(i: u32) -> String {
    ssh(i, "cat /etc/containerd/config.toml")
}

/// State of every node a failed run must not change: the current link
/// targets, the committed generation and the containerd config.
pub fn snapshot() -> Vec<String> {
    (1..=3)
        .map(|i| ssh(i, "cd /var/lib/kdeploy/phases && for l in *; do echo \"$l -> $(readlink $l)\"; done; cat /var/lib/kdeploy/current; cat /etc/containerd/config.toml; systemctl is-active containerd etcd"))
        .collect()
}

/// A temp project with `base.nix` (= tests/clusters/lab-etcd.nix) and variants.
pub struct Project {
    pub dir: tempfile::TempDir,
    lab: String,
}

impl Project {
    pub fn new() -> Project {
        let lab = std::fs::read_to_string(repo().join("tests/clusters/lab-etcd.nix")).unwrap();
        let p = Project { dir: tempfile::tempdir().unwrap(), lab };
        p.write("base", &p.lab);
        p
    }

    pub fn base(&self) -> PathBuf {
        self.dir.path().join("base.nix")
    }

    /// `name`.nix holding `text` moved to the test's lane (`lane.rs`).
    fn write(&self, name: &str, text: &str) -> PathBuf {
        let f = self.dir.path().join(format!("{name}.nix"));
        std::fs::write(&f, super::lane::text(text)).unwrap();
        f
    }

    /// `settings` text inserted after the containerd version line.
    pub fn variant(&self, name: &str, extra: &str) -> PathBuf {
        let anchor = "containerd.version = \"1.6.20\";";
        self.rewritten(name, &[(anchor, &format!("{anchor} {extra}"))])
    }

    /// tests/clusters/lab-etcd.nix with `from` replaced by `to` (which must occur).
    pub fn edited(&self, name: &str, from: &str, to: &str) -> PathBuf {
        self.rewritten(name, &[(from, to)])
    }

    /// tests/clusters/lab-etcd.nix with each `(from, to)` replaced in turn
    /// (each `from` must occur).
    pub fn rewritten(&self, name: &str, edits: &[(&str, &str)]) -> PathBuf {
        let mut text = self.lab.clone();
        for (from, to) in edits {
            assert!(text.contains(from), "tests/clusters/lab-etcd.nix has no `{from}`");
            text = text.replace(from, to);
        }
        self.write(name, &text)
    }

    /// Like `variant`, plus a pre hook sleeping `secs` in container-runtime
    /// (added to the evaluated cluster value, as a cluster file may).
    pub fn slow_variant(&self, name: &str, extra: &str, secs: u32) -> PathBuf {
        self.hook_variant(name, extra, "container-runtime", &format!("sleep {secs}"))
    }

    /// Like `variant`, plus a pre hook running `run` in `phase`.
    pub fn hook_variant(&self, name: &str, extra: &str, phase: &str, run: &str) -> PathBuf {
        let f = self.variant(name, extra);
        let anchor = "let kd = import <kdeploy>; in\nkd.cluster";
        let t = std::fs::read_to_string(&f).unwrap();
        assert!(t.contains(anchor));
        let t = t.replace(anchor, "let kd = import <kdeploy>; c = kd.cluster").trim_end().to_string()
            + &format!(
                ";\nin c // {{ nodes = builtins.mapAttrs (n: node: node // {{ phases = map (p: if p.name == \"{phase}\" \
                 then p // {{ hooks = p.hooks ++ [ {{ name = \"slow\"; when = \"pre\"; run = \"{run}\"; unless = null; }} ]; }} \
                 else p) node.phases; }}) c.nodes; }}\n"
            );
        std::fs::write(&f, t).unwrap();
        f
    }

    /// Back to the lab cluster (same node hashes as tests/clusters/lab-etcd.nix),
    /// once what an earlier test left running has ended ([`settle`]).
    pub fn restore(&self) {
        settle();
        let (out, _) = switch(&self.base());
        assert!(out.status.success(), "restoring the lab failed:\n{}", text(&out));
        assert_deployed(&self.base());
    }
}

/// Waits (up to two minutes) until no command of an earlier run still
/// runs on the etcd lab's nodes: a crash test leaves a hook of its killed
/// or frozen deployer running until its deadline, holding `lock.busy`, and
/// the next run there is refused until it ends (as a user's would be).
pub fn settle() {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    for i in 1..=3 {
        while !inside(i, "[ ! -e /var/lib/kdeploy/lock.busy ] || flock -n /var/lib/kdeploy/lock.busy true")
            .status
            .success()
        {
            assert!(
                std::time::Instant::now() < deadline,
                "node {i}: a command of an earlier run still runs after 2 min"
            );
            std::thread::sleep(std::time::Duration::from_millis(500));
        }
    }
}

/// Waits until `cond` holds (polling), or fails naming `what`.
pub fn wait_for(what: &str, limit: std::time::Duration, cond: impl Fn() -> bool) {
    let deadline = std::time::Instant::now() + limit;
    while !cond() {
        assert!(std::time::Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

pub fn statuses(j: &serde_json::Value) -> Vec<(String, String)> {
    j["nodes"].as_object().map_or(vec![], |m| {
        m.iter().map(|(k, n)| (k.clone(), n["status"].as_str().unwrap_or("").to_string())).collect()
    })
}

/// The init process (PID 1 inside) of node `i`: the child of its
/// systemd-nspawn, whose pid `lab.sh` keeps in `.lab/run/`. Read from files,
/// not `lab.sh status`, which connects to every node over SSH: the crash
/// tests poll a node's lock through this ten times a second.
pub fn nspawn_child(i: u32) -> String {
    let i = super::lane::node(i);
    let pid_file = super::lab_dir().join(format!("run/kdnode{i}.pid"));
    let pid = std::fs::read_to_string(&pid_file).unwrap_or_else(|e| panic!("{}: {e}", pid_file.display()));
    let pid = pid.trim();
    let tasks =
        std::fs::read_dir(format!("/proc/{pid}/task")).unwrap_or_else(|e| panic!("kdnode{i}'s nspawn {pid}: {e}"));
    tasks
        .filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("children")).ok())
        .find_map(|c| c.split_whitespace().next().map(str::to_string))
        .unwrap_or_else(|| panic!("kdnode{i}'s nspawn {pid} has no init process"))
}

/// Runs `cmd` inside node `i` without SSH (nsenter into its init).
pub fn inside(i: u32, cmd: &str) -> Output {
    Command::new("nsenter").args(["-t", &nspawn_child(i), "-a", "sh", "-c", cmd]).output().unwrap()
}

/// What a lab test's own setup changes on a node, which no reset undoes:
/// the login test's user (its home, its sudoers entry, the user databases).
const TEST_SETUP: [&str; 8] = [
    "/home/",
    "/etc/sudoers.d/",
    "/etc/passwd",
    "/etc/shadow",
    "/etc/group",
    "/etc/gshadow",
    "/etc/subuid",
    "/etc/subgid",
];

/// How node `i`'s files and units differ from what they were at boot, before
/// any switch (`lab/node-tree.sh`; lab.sh writes `.lab/run/kdnodeN.boot` when
/// it boots or reboots a node): `-LINE` gone since boot, `+LINE` new or
/// changed; what the tests' own setup changes left out.
pub fn differs_from_boot(i: u32) -> Vec<String> {
    let boot_file = super::lab_dir().join(format!("run/kdnode{}.boot", super::lane::node(i)));
    let boot = std::fs::read_to_string(&boot_file).unwrap_or_else(|e| panic!("{}: {e}", boot_file.display()));
    let script = std::fs::read_to_string(repo().join("lab/node-tree.sh")).unwrap();
    let now = ssh(i, &script);
    let kept = |l: &&str| !TEST_SETUP.iter().any(|p| l.split(' ').nth(1).is_some_and(|path| path.starts_with(p)));
    let set = |t: &str| -> std::collections::BTreeSet<String> { t.lines().filter(kept).map(str::to_string).collect() };
    let (boot, now) = (set(&boot), set(&now));
    let gone = boot.difference(&now).map(|l| format!("-{l}"));
    gone.chain(now.difference(&boot).map(|l| format!("+{l}"))).collect()
}
