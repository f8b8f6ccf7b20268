//! Shell syntax in any string of any cluster option never runs on a node.
//!
//! `tests/payloads/slots.nix` walks the stdlib's option declarations and the
//! `shape` of each type, and lists every place a string can sit in an
//! option's value (values, attribute names, list elements, record fields) —
//! a new option is covered without touching this test. For each place, each
//! payload below (command substitution, backticks, `;`, a newline, breaking
//! out of single or double quotes) and each of two base clusters that switch
//! on every hook, check and script a setting can reach,
//! `tests/payloads/cluster.nix` sets the option and `kdeploy eval --json`
//! evaluates it. Then either
//!
//! * evaluation fails, and the error names the option and shows the value; or
//! * it succeeds, and every hook, guard, check, `#!` script and env file
//!   (`*.env`, sourced by sh) holding the payload holds it only shell-quoted
//!   (as `lib.text.shQuote` quotes, outside other quotes), passes `sh -n`,
//!   and is run as user nobody with only stub commands on PATH (and
//!   `paths.binDir` pointing at them), in a temporary directory: the
//!   payload's marker file must never appear (running alone would miss an
//!   injection after an early `exit`, hence the lexer). Unit files and
//!   drop-ins must not hold the payload at all.
//!
//! The payloads create their marker with a redirection (`:>FILE`), not a
//! command, so stubbing every command does not hide an injection; a
//! self-test first shows the sandbox does see a payload run unquoted.

use std::collections::HashSet;
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use serde_json::Value;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// kdeploy with this working copy's stdlib: (exit code, stdout, stderr).
fn kdeploy(args: &[&str]) -> (i32, String, String) {
    let stdlib = repo().join("stdlib");
    let out = Command::new(env!("CARGO_BIN_EXE_kdeploy"))
        .args(args)
        .arg("--stdlib")
        .arg(&stdlib)
        .current_dir(repo())
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Commands the generated scripts call by name or from `paths.binDir`: all
/// stubs that succeed and do nothing.
const STUBS: &[&str] = &[
    "kubectl",
    "kubeadm",
    "kubelet",
    "etcd",
    "etcdctl",
    "crictl",
    "calicoctl",
    "containerd",
    "ctr",
    "runc",
    "systemctl",
    "journalctl",
    "swapoff",
    "modprobe",
    "sysctl",
    "ln",
    "mkdir",
    "rm",
    "chmod",
    "chown",
    "mv",
    "cp",
    "cat",
    "wc",
    "sleep",
    "grep",
    "sed",
    "tr",
    "cut",
    "head",
    "tail",
    "sha256sum",
    "id",
    "date",
    "touch",
    "install",
];

struct Sandbox {
    _dir: tempfile::TempDir,
    bin: PathBuf,
    work: PathBuf,
    marks: PathBuf,
    as_nobody: bool,
}

impl Sandbox {
    fn new() -> Sandbox {
        // A short name of plain characters: binDir must be a clean path.
        let dir = tempfile::Builder::new().prefix("kdsandbox").tempdir_in("/tmp").unwrap();
        let (bin, work, marks) = (dir.path().join("bin"), dir.path().join("work"), dir.path().join("marks"));
        for (d, mode) in [(dir.path(), 0o755), (&bin, 0o755), (&work, 0o777), (&marks, 0o777)] {
            std::fs::create_dir_all(d).unwrap();
            std::fs::set_permissions(d, std::fs::Permissions::from_mode(mode)).unwrap();
        }
        for s in STUBS {
            let p = bin.join(s);
            std::fs::write(&p, "#!/bin/sh\nexit 0\n").unwrap();
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        let uid = Command::new("id").arg("-u").output().unwrap();
        let as_nobody = String::from_utf8_lossy(&uid.stdout).trim() == "0";
        if as_nobody {
            assert!(
                Command::new("setpriv").arg("--version").output().is_ok_and(|o| o.status.success()),
                "setpriv (Debian package util-linux) is needed to run scripts as nobody"
            );
        }
        Sandbox { _dir: dir, bin, work, marks, as_nobody }
    }

    /// Run `script` with sh as nobody (when we are root), stub commands only,
    /// in the work directory; at most 10 s. Its outcome does not matter.
    fn run(&self, script: &str) {
        let mut c = Command::new("timeout");
        c.args(["-s", "KILL", "10"]);
        if self.as_nobody {
            c.args(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]);
        }
        c.arg("/usr/bin/env").arg("-i").arg(format!("PATH={}", self.bin.display()));
        c.arg(format!("HOME={}", self.work.display())).args(["/bin/sh", "-c", script]);
        c.current_dir(&self.work).stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null());
        c.status().unwrap();
    }

    /// The marker files payloads created.
    fn marks(&self) -> Vec<String> {
        std::fs::read_dir(&self.marks).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect()
    }

    fn clear_marks(&self) {
        for m in self.marks() {
            std::fs::remove_file(self.marks.join(m)).unwrap();
        }
    }

    /// The payloads: each creates marks/kdpwn<N> if a shell runs it.
    fn payloads(&self) -> Vec<String> {
        let m = |n: usize| format!("{}/kdpwn{n}", self.marks.display());
        vec![
            format!("$(:>{})", m(1)),
            format!("`:>{}`", m(2)),
            format!(";:>{};", m(3)),
            format!("\n:>{}\n", m(4)),
            format!("'$(:>{})'", m(5)),
            format!("\"$(:>{})\"", m(6)),
        ]
    }
}

/// The stdlib's one quoting rule for sh (`lib.text.shQuote`).
fn sh_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// Does `payload` occur in `script` other than as `sh_quote(payload)` outside
/// any quotes (the only form in which sh reads it as one plain word)? A
/// small lexer of sh quoting: backslash, '…', "…" (a heredoc or comment
/// holding the payload counts as unquoted: stricter than sh).
fn unquoted(script: &str, payload: &str) -> bool {
    let (q, b) = (sh_quote(payload), script.as_bytes());
    let mut i = 0;
    let mut state = b' '; // ' ' outside quotes, b'\'' or b'"' inside
    while i < b.len() {
        if b[i..].starts_with(b"kdpwn") {
            return true;
        }
        match (state, b[i]) {
            (b' ', _) if b[i..].starts_with(q.as_bytes()) => i += q.len() - 1,
            (b' ' | b'"', b'\\') if !b[i + 1..].starts_with(b"kdpwn") => i += 1,
            (b' ', c @ (b'\'' | b'"')) => state = c,
            (b'\'', b'\'') | (b'"', b'"') => state = b' ',
            _ => {}
        }
        i += 1;
    }
    false
}

/// sh -n: does the script parse?
fn parses(script: &str) -> Result<(), String> {
    let out = Command::new("sh").args(["-n", "-c", script]).output().unwrap();
    if out.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

/// (where, text) pairs.
type Texts = Vec<(String, String)>;

/// The texts of a cluster value a shell runs or sources, and those systemd reads.
fn texts(cluster: &Value) -> (Texts, Texts) {
    let (mut shell, mut units) = (Vec::new(), Vec::new());
    for (node, n) in cluster["nodes"].as_object().unwrap() {
        for p in n["phases"].as_array().unwrap() {
            let at = |what: &str| format!("node {node}, phase {}, {what}", p["name"].as_str().unwrap());
            for h in p["hooks"].as_array().unwrap() {
                let name = h["name"].as_str().unwrap();
                shell.push((at(&format!("hook {name}")), h["run"].as_str().unwrap().to_string()));
                if let Some(u) = h["unless"].as_str() {
                    shell.push((at(&format!("hook {name} (unless)")), u.to_string()));
                }
            }
            for c in p["checks"].as_array().unwrap() {
                shell.push((at(&format!("check {}", c["name"].as_str().unwrap())), c["run"].as_str().unwrap().into()));
            }
            for f in p["files"].as_array().unwrap() {
                let (path, Some(text)) = (f["path"].as_str().unwrap(), f["source"]["text"].as_str()) else { continue };
                if path.starts_with("/etc/systemd/") {
                    units.push((at(&format!("file {path}")), text.to_string()));
                } else if text.starts_with("#!") || path.ends_with(".env") {
                    shell.push((at(&format!("file {path}")), text.to_string()));
                }
            }
            for u in p["units"].as_array().unwrap() {
                units.push((at(&format!("unit {}", u["name"].as_str().unwrap())), u["text"].as_str().unwrap().into()));
            }
        }
    }
    // the membership commands the engine runs on nodes (stdlib/membership.nix)
    for (name, m) in cluster["memberships"].as_object().into_iter().flatten() {
        for cmd in ["list", "add", "promote", "remove", "handoff", "join"] {
            shell.push((format!("membership {name}, {cmd}"), m[cmd].as_str().unwrap().to_string()));
        }
        for (node, member) in m["members"].as_object().unwrap() {
            shell.push((format!("membership {name}, wipe on {node}"), member["wipe"].as_str().unwrap().to_string()));
        }
    }
    (shell, units)
}

#[test]
fn the_sandbox_sees_an_unquoted_payload_run() {
    let sb = Sandbox::new();
    for (i, p) in sb.payloads().iter().enumerate() {
        let mark = format!("kdpwn{}", i + 1);
        // unquoted, or naively single-quoted: some such use runs it
        for naive in [format!("echo {p}"), format!("echo '{p}'"), format!("A=\"{p}\"")] {
            sb.run(&naive);
        }
        assert_eq!(sb.marks(), vec![mark.clone()], "payload {p:?} not seen running");
        sb.clear_marks();
        // quoted with the stdlib's one quoting rule (lib.text.shQuote): inert
        let quoted = sh_quote(p);
        sb.run(&format!("echo {quoted}; A={quoted}"));
        assert!(sb.marks().is_empty(), "{quoted} ran");
        // and the lexer tells the two apart
        assert!(!unquoted(&format!("echo {quoted} x; A={quoted}"), p));
        for naive in [format!("echo {p}"), format!("echo \"{quoted}\""), format!("f {quoted}{p}")] {
            assert!(unquoted(&naive, p), "{naive}");
        }
    }
}

#[test]
fn shell_payloads_in_every_option_never_run() {
    let sb = Sandbox::new();
    let payloads = sb.payloads();
    let bin = sb.bin.to_string_lossy().into_owned();

    // Every declared option is walked; the places do not depend on the payload.
    let slots_of = |p: &str| {
        let (code, out, err) = kdeploy(&["eval", "--json", "tests/payloads/slots.nix", "--argstr", "payload", p]);
        assert_eq!(code, 0, "{err}");
        serde_json::from_str::<Value>(&out).unwrap()
    };
    let listed = slots_of(&payloads[0]);
    let (code, out, err) = kdeploy(&["options", "--json"]);
    assert_eq!(code, 0, "{err}");
    let declared: HashSet<String> =
        serde_json::from_str::<Value>(&out).unwrap().as_object().unwrap().keys().cloned().collect();
    let walked: HashSet<String> =
        listed["options"].as_array().unwrap().iter().map(|o| o.as_str().unwrap().to_string()).collect();
    assert_eq!(walked, declared, "slots.nix walks other options than `kdeploy options` lists");
    let slots: Vec<String> =
        listed["slots"].as_array().unwrap().iter().map(|s| s["option"].as_str().unwrap().to_string()).collect();
    for p in &payloads[1..] {
        assert_eq!(slots_of(p)["slots"].as_array().unwrap().len(), slots.len());
    }
    let with_strings: HashSet<&String> = slots.iter().collect();
    assert!(with_strings.len() > 90, "only {} options hold strings?", with_strings.len());

    let mut cases: Vec<(&str, usize, &String)> = Vec::new();
    for base in ["a", "b"] {
        for i in 0..slots.len() {
            cases.extend(payloads.iter().map(|p| (base, i, p)));
        }
    }
    let next = AtomicUsize::new(0);
    let failures = Mutex::new(Vec::<String>::new());
    let ran = Mutex::new(HashSet::<String>::new());
    let (refused, accepted) = (AtomicUsize::new(0), AtomicUsize::new(0));
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| {
                while let Some(&(base, i, payload)) = cases.get(next.fetch_add(1, Ordering::Relaxed)) {
                    let option = &slots[i];
                    let idx = i.to_string();
                    let case = format!("{option} (place {i}, base {base}, payload {payload:?})");
                    let args = ["eval", "--json", "tests/payloads/cluster.nix", "--argstr", "payload", payload];
                    let more = ["--argstr", "index", &idx, "--argstr", "base", base, "--argstr", "binDir", &bin];
                    let (code, out, err) = kdeploy(&[&args[..], &more[..]].concat());
                    let fail = |m: String| failures.lock().unwrap().push(m);
                    match code {
                        1 => {
                            refused.fetch_add(1, Ordering::Relaxed);
                            let json = serde_json::to_string(payload).unwrap();
                            let shown = err.contains(payload.as_str()) || err.contains(&json[1..json.len() - 1]);
                            if !err.contains(option.as_str()) || !shown {
                                fail(format!("{case}: refused without naming the option and the value:\n{err}"));
                            }
                        }
                        0 => {
                            accepted.fetch_add(1, Ordering::Relaxed);
                            let (shell, units) = texts(&serde_json::from_str(&out).unwrap());
                            for (at, t) in units.iter().filter(|(_, t)| t.contains("kdpwn")) {
                                fail(format!("{case}: the payload reached {at}:\n{t}"));
                            }
                            for (at, t) in shell.iter().filter(|(_, t)| t.contains("kdpwn")) {
                                if unquoted(t, payload) {
                                    fail(format!("{case}: {at} holds the payload other than shell-quoted:\n{t}"));
                                }
                                if let Err(e) = parses(t) {
                                    fail(format!("{case}: {at} no longer parses ({e}):\n{t}"));
                                }
                                // One script at a time, so a marker names its script.
                                let mut ran = ran.lock().unwrap();
                                if ran.insert(t.clone()) {
                                    sb.run(t);
                                    let marks = sb.marks();
                                    if !marks.is_empty() {
                                        fail(format!("{case}: {at} ran the payload ({marks:?}):\n{t}"));
                                        sb.clear_marks();
                                    }
                                }
                            }
                        }
                        _ => fail(format!("{case}: exit code {code}:\n{err}")),
                    }
                }
            });
        }
    });
    let failures = failures.into_inner().unwrap();
    eprintln!(
        "{} places in {} options x {} payloads x 2 bases: {} refused, {} accepted, {} scripts run",
        slots.len(),
        with_strings.len(),
        payloads.len(),
        refused.into_inner(),
        accepted.into_inner(),
        ran.into_inner().unwrap().len()
    );
    assert!(failures.is_empty(), "{} problems:\n{}", failures.len(), failures.join("\n\n"));
}
