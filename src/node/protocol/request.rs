//! The requests the deployer sends the node program: one [`Request`]
//! variant per command, which encodes its argument vector — every value
//! checked here the way the program checks it, so a bad one fails before
//! anything is sent — and, for the commands that read lines on stdin,
//! that input ([`have_input`], [`fetch_input`]). `agent.rs` quotes each
//! argument into the command line; no value reaches a shell unquoted.
//! (`put`'s stream is `put_stream.rs`; manifests are `manifest.rs`.)

use super::reply::is_name;
use crate::store::Digest;

/// A request that cannot be encoded: the value and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{command}: {why}")]
pub struct BadRequest {
    pub command: &'static str,
    pub why: String,
}

/// One command of the node program with its arguments.
#[derive(Debug, Clone)]
pub enum Request<'a> {
    /// Take the lock for as long as the heartbeat goes on; with
    /// `status`/`verify`, print what `status` (`--verify`) prints first.
    Lock {
        owner: &'a str,
        token: &'a str,
        status: bool,
        verify: bool,
    },
    Have,
    Put,
    Fetch {
        url: &'a str,
    },
    /// Secrets in one stream (`put_secrets_input`).
    PutSecrets,
    Stage {
        generation: u64,
        phases: Vec<&'a str>,
    },
    /// `None`: remove the phase.
    Switch {
        generation: Option<u64>,
        phase: &'a str,
    },
    /// A command run under the lock (hooks, checks, membership commands).
    Run {
        argv: Vec<&'a str>,
    },
    Status {
        verify: bool,
    },
    Commit {
        generation: u64,
        hash: Digest,
    },
    State,
    PhaseRecord {
        generation: u64,
    },
    Manifest {
        generation: u64,
        phase: &'a str,
    },
    GcInfo,
    Gc {
        remove: &'a [u64],
        dry_run: bool,
    },
    Forget,
    Units {
        ops: &'a [String],
    },
    Blob {
        hash: Digest,
        max: u64,
    },
    /// Arm the node's self-rollback (`id`: 32 hex digits, a token's
    /// shape): unless disarmed, `seconds` from now the node moves each of
    /// `steps` back by itself, in the order given.
    Arm {
        id: &'a str,
        seconds: u64,
        steps: &'a [ArmedStep],
    },
    /// The armed node is the deployer's again.
    Disarm {
        id: &'a str,
    },
}

/// One phase of an [`Request::Arm`]: the generation it goes back to
/// (`None`: removed) and the unit operations before and after that switch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArmedStep {
    pub phase: String,
    pub from: Option<u64>,
    pub before: Vec<String>,
    pub after: Vec<String>,
}

/// Unit operations `units` knows (see `plan.rs`).
const UNIT_OPS: [&str; 7] = ["daemon-reload", "stop", "disable", "enable", "reload", "restart", "start"];

impl Request<'_> {
    /// The command's name, as the program dispatches on it.
    pub fn name(&self) -> &'static str {
        match self {
            Request::Lock { .. } => "lock",
            Request::Have => "have",
            Request::Put => "put",
            Request::Fetch { .. } => "fetch",
            Request::PutSecrets => "put-secrets",
            Request::Stage { .. } => "stage",
            Request::Switch { .. } => "switch",
            Request::Run { .. } => "run",
            Request::Status { .. } => "status",
            Request::Commit { .. } => "commit",
            Request::State => "state",
            Request::PhaseRecord { .. } => "phase-record",
            Request::Manifest { .. } => "manifest",
            Request::GcInfo => "gc-info",
            Request::Gc { .. } => "gc",
            Request::Forget => "forget",
            Request::Units { .. } => "units",
            Request::Blob { .. } => "blob",
            Request::Arm { .. } => "arm",
            Request::Disarm { .. } => "disarm",
        }
    }

    /// Whether the command changes the node: it then carries the lock's
    /// token (`--held TOKEN`) and is refused without the live one.
    pub fn changes_node(&self) -> bool {
        !matches!(
            self,
            Request::Lock { .. }
                | Request::Status { .. }
                | Request::State
                | Request::PhaseRecord { .. }
                | Request::Manifest { .. }
                | Request::GcInfo
                | Request::Blob { .. }
        )
    }

    /// The command and its arguments, each checked.
    pub fn argv(&self) -> Result<Vec<String>, BadRequest> {
        let command = self.name();
        let refuse = |why: String| BadRequest { command, why };
        let mut v = vec![command.to_string()];
        let phase = |p: &str| match is_name(p) {
            true => Ok(p.to_string()),
            false => Err(refuse(format!("bad phase name {p:?}"))),
        };
        let id = |t: &str| match is_token(t) {
            true => Ok(t.to_string()),
            false => Err(refuse(format!("bad id {t:?}"))),
        };
        let unit_ops = |ops: &[String]| -> Result<Vec<String>, BadRequest> {
            ops.iter()
                .map(|op| {
                    let (verb, units) = op.split_once(':').unwrap_or((op, "x"));
                    match UNIT_OPS.contains(&verb) && units.split(',').all(is_name) {
                        true => Ok(op.clone()),
                        false => Err(refuse(format!("bad operation {op:?}"))),
                    }
                })
                .collect()
        };
        match self {
            Request::Lock { owner, token, status, verify } => {
                if owner.is_empty() || owner.chars().any(char::is_control) || owner.len() > 200 {
                    return Err(refuse(format!("bad owner {owner:?} (one printable line, at most 200 bytes)")));
                }
                if !is_token(token) {
                    return Err(refuse(format!("bad token {token:?}")));
                }
                v.extend([owner.to_string(), token.to_string()]);
                if *status {
                    v.push("--status".into());
                }
                if *verify {
                    if !status {
                        return Err(refuse("--verify needs --status".into()));
                    }
                    v.push("--verify".into());
                }
            }
            Request::Have | Request::Put | Request::PutSecrets | Request::State | Request::GcInfo | Request::Forget => {
            }
            Request::Fetch { url } => {
                let authority = url.split_once("://").map_or("", |(_, r)| r.split('/').next().unwrap_or(""));
                if !(url.starts_with("http://") || url.starts_with("https://")) {
                    return Err(refuse(format!("not an http(s) URL: {url:?}")));
                }
                if !url.bytes().all(|b| b.is_ascii_alphanumeric() || b":/._~%+@[]-".contains(&b)) {
                    return Err(refuse(format!("unexpected characters in URL: {url:?}")));
                }
                if authority.contains('@') {
                    return Err(refuse("credentials in the cache URL are refused".into()));
                }
                v.push(url.to_string());
            }
            Request::Stage { generation, phases } => {
                if phases.is_empty() {
                    return Err(refuse("no phase".into()));
                }
                v.push(generation.to_string());
                for p in phases {
                    v.push(phase(p)?);
                }
            }
            Request::Switch { generation, phase: p } => {
                v.push(generation.map_or("none".into(), |g| g.to_string()));
                v.push(phase(p)?);
            }
            Request::Run { argv } => {
                if argv.is_empty() {
                    return Err(refuse("no command".into()));
                }
                v.extend(argv.iter().map(|a| a.to_string()));
            }
            Request::Status { verify } => {
                if *verify {
                    v.push("--verify".into());
                }
            }
            Request::Commit { generation, hash } => v.extend([generation.to_string(), hash.hex()]),
            Request::PhaseRecord { generation } => v.push(generation.to_string()),
            Request::Manifest { generation, phase: p } => v.extend([generation.to_string(), phase(p)?]),
            Request::Gc { remove, dry_run } => {
                if *dry_run {
                    v.push("--dry-run".into());
                }
                v.extend(remove.iter().map(u64::to_string));
            }
            Request::Units { ops } => v.extend(unit_ops(ops)?),
            Request::Blob { hash, max } => v.extend([hash.hex(), max.to_string()]),
            Request::Arm { id: i, seconds, steps } => {
                if steps.is_empty() {
                    return Err(refuse("no step".into()));
                }
                v.extend([id(i)?, seconds.to_string()]);
                for st in steps.iter() {
                    let mut words = vec![phase(&st.phase)?, st.from.map_or("none".into(), |g| g.to_string())];
                    words.extend(unit_ops(&st.before)?);
                    words.push("/".into());
                    words.extend(unit_ops(&st.after)?);
                    v.push(words.join(" "));
                }
            }
            Request::Disarm { id: i } => v.push(id(i)?),
        }
        // an argument is a C string: a NUL cannot reach the program
        if let Some(a) = v.iter().find(|a| a.contains('\0')) {
            return Err(refuse(format!("a NUL byte in argument {a:?}")));
        }
        Ok(v)
    }
}

/// A blob as the deployer knows it, for `have` to check the node's copy
/// against: its size always, its sha256 when checking it is cheap (see
/// `deploy/push.rs`); never a hash of a secret.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WantedBlob {
    pub hash: Digest,
    pub size: u64,
    pub sha256: Option<String>,
}

/// `have`'s stdin: `B3 SIZE [SHA256]` per blob.
pub fn have_input(blobs: &[WantedBlob]) -> Result<String, BadRequest> {
    blobs
        .iter()
        .map(|b| match &b.sha256 {
            Some(s) if is_sha256(s) => Ok(format!("{} {} {s}\n", b.hash.hex(), b.size)),
            Some(s) => Err(BadRequest { command: "have", why: format!("bad sha256 {s:?}") }),
            None => Ok(format!("{} {}\n", b.hash.hex(), b.size)),
        })
        .collect()
}

/// `put-secrets`' stdin: per secret a `KEYED-HASH LENGTH` line, then its
/// bytes; an `end` line last (a stream cut short is refused). Only the keyed hash names a secret: no unkeyed hash of one
/// reaches a node (the node checks each by its length).
pub fn put_secrets_input(secrets: &[(Digest, &[u8])]) -> Vec<u8> {
    let mut v = Vec::with_capacity(secrets.iter().map(|(_, b)| b.len() + 80).sum());
    for (d, bytes) in secrets {
        v.extend_from_slice(format!("{} {}\n", d.hex(), bytes.len()).as_bytes());
        v.extend_from_slice(bytes);
    }
    v.extend_from_slice(b"end\n");
    v
}

/// `fetch`'s stdin: `B3 SHA256 SIZE` per blob.
pub fn fetch_input(blobs: &[(Digest, &str, u64)]) -> Result<String, BadRequest> {
    blobs
        .iter()
        .map(|(d, sha, size)| match is_sha256(sha) {
            true => Ok(format!("{} {sha} {size}\n", d.hex())),
            false => Err(BadRequest { command: "fetch", why: format!("bad sha256 {sha:?}") }),
        })
        .collect()
}

/// A lock token or an arming id as the program takes one: 32 lowercase
/// hex digits.
fn is_token(s: &str) -> bool {
    s.len() == 32 && s.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// A sha256 as the program takes one: 64 lowercase hex digits.
pub fn is_sha256(s: &str) -> bool {
    s.len() == 64 && s.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(r: Request) -> Vec<String> {
        r.argv().unwrap()
    }

    #[test]
    fn each_command_encodes_its_arguments() {
        let token = "0123456789abcdef0123456789abcdef";
        assert_eq!(
            argv(Request::Lock { owner: "me@host pid 1", token, status: true, verify: true }),
            ["lock", "me@host pid 1", token, "--status", "--verify"]
        );
        assert_eq!(argv(Request::Switch { generation: None, phase: "etcd" }), ["switch", "none", "etcd"]);
        assert_eq!(argv(Request::Stage { generation: 4, phases: vec!["a", "b"] }), ["stage", "4", "a", "b"]);
        assert_eq!(argv(Request::Gc { remove: &[1, 2], dry_run: true }), ["gc", "--dry-run", "1", "2"]);
        let ops = ["stop:a.service,b@1.service".to_string(), "daemon-reload".to_string()];
        assert_eq!(argv(Request::Units { ops: &ops }), ["units", &ops[0], &ops[1]]);
        assert_eq!(argv(Request::Run { argv: vec!["sh", "-c", "echo 'a\nb'"] })[3], "echo 'a\nb'");
        let step = |phase: &str, from, before: &[&str], after: &[&str]| ArmedStep {
            phase: phase.into(),
            from,
            before: before.iter().map(|o| o.to_string()).collect(),
            after: after.iter().map(|o| o.to_string()).collect(),
        };
        let steps = [
            step("cni", Some(3), &["stop:a.service"], &["daemon-reload", "start:a.service"]),
            step("preinstall", None, &[], &[]),
        ];
        assert_eq!(
            argv(Request::Arm { id: token, seconds: 30, steps: &steps }),
            ["arm", token, "30", "cni 3 stop:a.service / daemon-reload start:a.service", "preinstall none /"]
        );
        assert!(Request::Disarm { id: token }.changes_node());
        assert!(Request::Switch { generation: Some(1), phase: "x" }.changes_node());
        assert!(!Request::Blob { hash: Digest([0; 32]), max: 1 }.changes_node());
    }

    #[test]
    fn hostile_values_are_refused_before_anything_is_sent() {
        let token = "0123456789abcdef0123456789abcdef";
        let bad = [
            Request::Lock { owner: "a\nlocked", token, status: false, verify: false },
            Request::Lock { owner: "", token, status: false, verify: false },
            Request::Lock { owner: "a", token: "ABC", status: false, verify: false },
            Request::Lock { owner: "a", token, status: false, verify: true },
            Request::Switch { generation: Some(1), phase: "../etc" },
            Request::Switch { generation: Some(1), phase: "-rf" },
            Request::Switch { generation: Some(1), phase: "a b" },
            Request::Manifest { generation: 1, phase: "a\nb" },
            Request::Stage { generation: 1, phases: vec![] },
            Request::Fetch { url: "file:///etc/shadow" },
            Request::Fetch { url: "http://user:pw@cache/x" },
            Request::Fetch { url: "http://cache/$(reboot)" },
            Request::Run { argv: vec!["sh", "-c", "a\0b"] },
            Request::Run { argv: vec![] },
            Request::Disarm { id: "x" },
            Request::Disarm { id: "0123456789ABCDEF0123456789abcdef" },
            Request::Arm { id: token, seconds: 1, steps: &[] },
        ];
        for r in bad {
            assert!(r.argv().is_err(), "{r:?}");
        }
        for op in ["start:a;reboot", "frobnicate:a", "start:", "stop:a,,b", "start:../x", "--"] {
            let ops = [op.to_string()];
            assert!(Request::Units { ops: &ops }.argv().is_err(), "{op}");
            for (before, after) in [(ops.to_vec(), vec![]), (vec![], ops.to_vec())] {
                let steps = [ArmedStep { phase: "p".into(), from: None, before, after }];
                assert!(Request::Arm { id: token, seconds: 1, steps: &steps }.argv().is_err(), "{op}");
            }
        }
        for phase in ["a b", "a;b", "/", ""] {
            let steps = [ArmedStep { phase: phase.into(), from: None, before: vec![], after: vec![] }];
            assert!(Request::Arm { id: token, seconds: 1, steps: &steps }.argv().is_err(), "{phase}");
        }
    }

    #[test]
    fn stdin_lines() {
        let w = WantedBlob { hash: Digest([1; 32]), size: 5, sha256: None };
        assert_eq!(have_input(std::slice::from_ref(&w)).unwrap(), format!("{} 5\n", Digest([1; 32]).hex()));
        let with = WantedBlob { sha256: Some("a\nb".into()), ..w };
        assert!(have_input(&[with]).is_err());
        assert!(fetch_input(&[(Digest([1; 32]), "00", 1)]).is_err());
    }
}
