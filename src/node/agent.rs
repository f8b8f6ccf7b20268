//! [`Node`]: the deployer's handle on one node's kdeploy state — every method
//! is one command of the node program (one round trip, one SSH channel),
//! over any [`Host`]. Nothing here decides *what* to do; orchestration does.
//! Each handle has its own lock token (see `lock.rs`): the commands that
//! change the node carry it (`--held TOKEN`), and what else the run does
//! on the node (hooks, checks, membership commands) goes through the node
//! program's `run` with it ([`Node::exec_held`]), so all of it is refused
//! once the lock is not this run's.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use super::exit::NodeExit;
use super::gc::{parse_info, GcReport, NodeGeneration};
use super::lock::{new_token, NodeLock};
use super::manifest::{Manifest, ManifestError};
use super::plan::{plan_units, UnitPlan};
use super::put_stream::{Body, PutBlob, PutStream};
use super::script;
use crate::store::Digest;
use crate::transport::{shell_quote, Error as TransportError, Host, Output, Process};

#[derive(Debug, thiserror::Error)]
pub enum NodeError {
    #[error(transparent)]
    Transport(#[from] TransportError),
    #[error("{host}: {command}: {message}")]
    Command { host: String, command: String, status: u32, message: String },
    #[error("{host}: is locked by another kdeploy run: {owner}")]
    Locked { host: String, owner: String },
    /// The node refused a command that changes it: this run's lock token
    /// is not the live holder's (exit 77).
    #[error(
        "{host}: this run does not hold the node's lock any more (lost while the deployer was paused or cut \
         off for 30 s or more; held now by: {holder})"
    )]
    LockLost { host: String, holder: String },
    #[error("{host}: unit(s) failed to {what}:\n{journal}")]
    UnitFailed { host: String, what: String, journal: String },
    #[error("{host}: {0}", host = .1)]
    Manifest(ManifestError, String),
    #[error("{host}: unexpected answer to {command}: {answer:?}")]
    Protocol { host: String, command: String, answer: String },
}

/// What `status` reports: the committed generation, the next free number,
/// the generation each phase link points into.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NodeStatus {
    /// (generation, node hash) last committed.
    pub current: Option<(u64, Digest)>,
    /// Lowest generation number not used on the node.
    pub next: u64,
    pub phases: BTreeMap<String, u64>,
    /// A link moved since the last commit (a run died or was cut off).
    pub pending: bool,
    /// What differs from the linked generations (only from
    /// [`Node::status_verified`]).
    pub drift: Vec<Drift>,
    /// The node has `zstd`: `put` may send it blobs compressed.
    pub zstd: bool,
}

/// One difference between a node and its linked generations: a managed
/// file replaced or edited by hand, or an enabled unit not running.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Drift {
    pub phase: String,
    /// "file" or "unit".
    pub kind: String,
    /// The managed path or the unit name.
    pub what: String,
    pub why: String,
}

impl std::fmt::Display for Drift {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {} {} {}", self.phase, self.kind, self.what, self.why)
    }
}

/// What a node's `fetch` could not get from the binary cache.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct NotFetched {
    /// Every blob not fetched (to send over SSH).
    pub failed: Vec<Digest>,
    /// Those the cache holds wrong (other bytes, or more of them than
    /// announced): to put into the cache again.
    pub rejected: Vec<Digest>,
    /// What the node said about them.
    pub why: String,
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

impl WantedBlob {
    fn line(&self) -> String {
        match &self.sha256 {
            Some(s) => format!("{} {} {s}\n", self.hash.hex(), self.size),
            None => format!("{} {}\n", self.hash.hex(), self.size),
        }
    }
}

/// The node program on one host. Create with [`Node::install`].
/// What [`Node::read_blob`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoredBlob {
    Missing,
    TooBig(u64),
    Bytes(Vec<u8>),
}

/// What the command opening a node prints when the node program is not
/// there yet.
const NOT_INSTALLED: &str = "kdeploy-node-not-installed";

/// How the node program's refusal for want of the lock begins (with exit
/// 77): a hook of the user's that exits 77 is not taken for one.
const LOCK_LOST: &str = "kdeploy-node: lock lost: ";

/// A put stream from this size up runs as a bulk upload
/// ([`Host::upload_bulk`]: over SSH, a connection of its own); a run's
/// small puts (a changed config file, a secret) keep to the node's
/// connection and cost no handshake.
const BULK_FROM: u64 = 1 << 20;

pub struct Node<'h> {
    host: &'h dyn Host,
    /// `KDEPLOY_PREFIX` for tests against a directory; "" on real nodes.
    prefix: String,
    /// The token this handle's lock carries (`lock`), and its commands
    /// that change the node (`--held`).
    token: String,
    /// Set when the node refuses a command for want of the lock; shared
    /// with the [`NodeLock`] this handle took.
    lost: Arc<AtomicBool>,
}

impl<'h> Node<'h> {
    /// Make sure the node program is on the node (one round trip).
    pub async fn install(host: &'h dyn Host) -> Result<Node<'h>, NodeError> {
        Self::install_with_prefix(host, "").await
    }

    /// As [`Node::install`], with every node path below `prefix` (tests).
    pub async fn install_with_prefix(host: &'h dyn Host, prefix: &str) -> Result<Node<'h>, NodeError> {
        let node = Node::new(host, prefix);
        let cmd = script::install_command(prefix);
        let out = host.exec(&cmd, Some(script::SCRIPT.as_bytes())).await?;
        node.check("install", out)?;
        Ok(node)
    }

    fn new(host: &'h dyn Host, prefix: &str) -> Node<'h> {
        Node { host, prefix: prefix.to_string(), token: new_token(), lost: Arc::default() }
    }

    pub fn host(&self) -> &'h dyn Host {
        self.host
    }

    /// The node program's state directory, for the few reads and writes the
    /// deployer does there itself (see `deploy/state.rs`).
    pub fn root(&self) -> String {
        format!("{}/var/lib/kdeploy", self.prefix)
    }

    /// The command line running the node program with `args`.
    pub fn command(&self, args: &[&str]) -> String {
        let mut s = String::new();
        if !self.prefix.is_empty() {
            s += &format!("KDEPLOY_PREFIX={} ", shell_quote(&self.prefix));
        }
        s += &format!("sh {}", shell_quote(&script::script_path(&self.prefix)));
        for a in args {
            s.push(' ');
            s += &shell_quote(a);
        }
        s
    }

    /// The command line running a command that changes the node: refused
    /// by the node program unless this handle holds the node's lock.
    fn held(&self, args: &[&str]) -> String {
        self.command(&[&["--held", self.token.as_str()], args].concat())
    }

    fn check(&self, what: &str, out: Output) -> Result<Output, NodeError> {
        if out.success() {
            return Ok(out);
        }
        self.lock_lost(&out)?;
        Err(NodeError::Command {
            host: self.host.name().to_string(),
            command: what.to_string(),
            status: out.status,
            message: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        })
    }

    /// [`NodeError::LockLost`] when `out` is the node program's refusal
    /// for want of the lock.
    fn lock_lost(&self, out: &Output) -> Result<(), NodeError> {
        let stderr = String::from_utf8_lossy(&out.stderr);
        match stderr.lines().find_map(|l| l.strip_prefix(LOCK_LOST)) {
            Some(why) if NodeExit::of(out.status) == NodeExit::LockLost => {
                self.lost.store(true, Ordering::SeqCst);
                Err(NodeError::LockLost {
                    host: self.host.name().to_string(),
                    holder: why.rsplit_once("(held by: ").map_or(why, |(_, h)| h.trim_end_matches(')')).to_string(),
                })
            }
            _ => Ok(()),
        }
    }

    async fn run(&self, args: &[&str], stdin: Option<&[u8]>) -> Result<Output, NodeError> {
        let out = self.host.exec(&self.command(args), stdin).await?;
        self.check(&args.join(" "), out)
    }

    /// [`Node::run`] of a command that changes the node (see [`Node::held`]).
    async fn run_held(&self, args: &[&str], stdin: Option<&[u8]>) -> Result<Output, NodeError> {
        let out = self.host.exec(&self.held(args), stdin).await?;
        self.check(&args.join(" "), out)
    }

    /// Run `script` under sh on the node while this handle holds the
    /// node's lock (the node program's `run`): how hooks, checks and
    /// membership commands run. Its output whatever its status, or
    /// [`NodeError::LockLost`] when the node refused to start it.
    pub async fn exec_held(&self, script: &str) -> Result<Output, NodeError> {
        let out = self.host.exec(&self.held(&["run", "sh", "-c", script]), None).await?;
        self.lock_lost(&out)?;
        Ok(out)
    }

    /// Take the node lock for as long as the returned guard (and the
    /// connection) lives. `owner` is shown to a run that finds it taken.
    pub async fn lock(&self, owner: &str) -> Result<NodeLock, NodeError> {
        let p = self.host.spawn(&self.command(&["lock", owner, &self.token])).await?;
        let (lock, _) = self.locked(p).await?.ok_or_else(|| self.bad_answer("lock", NOT_INSTALLED))?;
        Ok(lock)
    }

    /// Install the node program unless it is there, take the lock and read
    /// the status with every drift — in one round trip when the program is
    /// already on the node (every run after the first): what a run does
    /// first on every node, so what a no-op costs.
    pub async fn open_locked(
        host: &'h dyn Host,
        prefix: &str,
        owner: &str,
    ) -> Result<(Node<'h>, NodeLock, NodeStatus), NodeError> {
        let node = Node::new(host, prefix);
        let lock = node.command(&["lock", owner, &node.token, "--status", "--verify"]);
        let path = shell_quote(&script::script_path(prefix));
        let p = host.spawn(&format!("if [ -f {path} ]; then {lock}; else echo {NOT_INSTALLED}; fi")).await?;
        let (guard, text) = match node.locked(p).await? {
            Some(held) => held,
            None => {
                node.check(
                    "install",
                    host.exec(&script::install_command(prefix), Some(script::SCRIPT.as_bytes())).await?,
                )?;
                node.locked(host.spawn(&lock).await?).await?.ok_or_else(|| node.bad_answer("lock", NOT_INSTALLED))?
            }
        };
        let status = node.parse_status(&text)?;
        Ok((node, guard, status))
    }

    /// Wait for a started `lock` command to print `locked`: the guard and
    /// what it printed before; `None` when the node program is not there.
    async fn locked(&self, mut p: Process) -> Result<Option<(NodeLock, String)>, NodeError> {
        let mut before = String::new();
        while let Some(line) = p.read_line().await {
            if line == b"locked" {
                self.lost.store(false, Ordering::SeqCst);
                return Ok(Some((NodeLock::new(self.host.name(), p, self.lost.clone()), before)));
            }
            if line == NOT_INSTALLED.as_bytes() {
                return Ok(None);
            }
            before += &String::from_utf8_lossy(&line);
            before.push('\n');
        }
        let out = p.wait().await;
        let msg = String::from_utf8_lossy(&out.stderr).trim().to_string();
        if NodeExit::of(out.status) == NodeExit::Locked {
            let owner = msg.trim_start_matches("kdeploy-node: locked by another run ");
            let owner = owner.trim_start_matches("kdeploy-node: locked: ").to_string();
            return Err(NodeError::Locked { host: self.host.name().to_string(), owner });
        }
        Err(NodeError::Command {
            host: self.host.name().to_string(),
            command: "lock".into(),
            status: out.status,
            message: msg,
        })
    }

    fn bad_answer(&self, command: &str, answer: &str) -> NodeError {
        NodeError::Protocol { host: self.host.name().to_string(), command: command.into(), answer: answer.into() }
    }

    /// Committed generation, next free number, phase links.
    pub async fn status(&self) -> Result<NodeStatus, NodeError> {
        self.status_with(&["status"]).await
    }

    /// [`Node::status`] plus every [`Drift`] from the linked generations.
    pub async fn status_verified(&self) -> Result<NodeStatus, NodeError> {
        self.status_with(&["status", "--verify"]).await
    }

    async fn status_with(&self, args: &[&str]) -> Result<NodeStatus, NodeError> {
        let out = self.run(args, None).await?;
        self.parse_status(&out.stdout_str())
    }

    fn parse_status(&self, text: &str) -> Result<NodeStatus, NodeError> {
        let mut st = NodeStatus::default();
        let bad = || NodeError::Protocol {
            host: self.host.name().to_string(),
            command: "status".into(),
            answer: text.to_string(),
        };
        for line in text.lines() {
            if let Some(d) = line.strip_prefix("drift\t") {
                match d.splitn(4, '\t').collect::<Vec<_>>().as_slice() {
                    [phase, kind, what, why] => st.drift.push(Drift {
                        phase: phase.to_string(),
                        kind: kind.to_string(),
                        what: what.to_string(),
                        why: why.to_string(),
                    }),
                    _ => return Err(bad()),
                }
                continue;
            }
            let w: Vec<&str> = line.split(' ').collect();
            match w.as_slice() {
                ["current", "none"] => {}
                ["current", n, h] => {
                    st.current = Some((n.parse().map_err(|_| bad())?, Digest::parse(h).ok_or_else(bad)?))
                }
                ["next", n] => st.next = n.parse().map_err(|_| bad())?,
                ["phase", p, n] => {
                    st.phases.insert(p.to_string(), n.parse().map_err(|_| bad())?);
                }
                ["pending"] => st.pending = true,
                ["has", "zstd"] => st.zstd = true,
                ["has", _] => {}
                ["lock", ..] => {}
                _ => return Err(bad()),
            }
        }
        Ok(st)
    }

    /// Which of `blobs` the node lacks: absent, or there with another size
    /// (or sha256, when given) — such a blob is removed on the node and
    /// comes back here, to be sent again.
    pub async fn missing(&self, blobs: &[WantedBlob]) -> Result<Vec<Digest>, NodeError> {
        let input: String = blobs.iter().map(WantedBlob::line).collect();
        let out = self.run_held(&["have"], Some(input.as_bytes())).await?;
        self.hashes("have", &out)
    }

    /// Stream `blobs` into the store, all in one command; the node checks
    /// the sha256 of each (decompressed, if sent compressed) before any
    /// becomes visible under its hash. Returns the body bytes sent.
    /// [`BULK_FROM`] bytes or more go as a bulk upload.
    pub async fn put(&self, blobs: &[PutBlob<'_>]) -> Result<u64, NodeError> {
        if blobs.is_empty() {
            return Ok(0);
        }
        let mut stream = PutStream::new(blobs);
        let command = self.held(&["put"]);
        let out = match blobs.iter().map(PutBlob::body_len).sum::<u64>() >= BULK_FROM {
            true => self.host.upload_bulk(&command, &mut stream).await?,
            false => self.host.upload(&command, &mut stream).await?,
        };
        let what = match blobs {
            [one] => format!("put {}", one.hash),
            _ => format!("put ({} blobs)", blobs.len()),
        };
        self.check(&what, out)?;
        Ok(stream.sent)
    }

    /// Have the node fetch `blobs` (hash, sha256 hex, size) it lacks from
    /// the binary cache at `base`, each at most its size; returns those it
    /// could not get (sent over SSH instead), which of them the cache holds
    /// wrong, and what the node said about them.
    pub async fn fetch(&self, base: &str, blobs: &[(Digest, &str, u64)]) -> Result<NotFetched, NodeError> {
        let input: String = blobs.iter().map(|(d, sha, size)| format!("{} {sha} {size}\n", d.hex())).collect();
        let out = self.run_held(&["fetch", base], Some(input.as_bytes())).await?;
        let mut not = NotFetched { why: String::from_utf8_lossy(&out.stderr).trim().to_string(), ..Default::default() };
        for line in out.stdout_str().lines() {
            let (h, what) = line.split_once(' ').unwrap_or((line, ""));
            let d = Digest::parse(h).filter(|_| matches!(what, "rejected" | "unavailable"));
            let Some(d) = d else {
                return Err(NodeError::Protocol {
                    host: self.host.name().to_string(),
                    command: "fetch".into(),
                    answer: line.to_string(),
                });
            };
            if what == "rejected" {
                not.rejected.push(d);
            }
            not.failed.push(d);
        }
        Ok(not)
    }

    /// The hashes a command printed, one per line.
    fn hashes(&self, command: &str, out: &Output) -> Result<Vec<Digest>, NodeError> {
        out.stdout_str()
            .lines()
            .map(|l| {
                Digest::parse(l).ok_or_else(|| NodeError::Protocol {
                    host: self.host.name().to_string(),
                    command: command.into(),
                    answer: l.to_string(),
                })
            })
            .collect()
    }

    /// [`Node::put`] from memory.
    pub async fn put_bytes(&self, hash: &Digest, sha256: &str, bytes: &[u8]) -> Result<(), NodeError> {
        self.put(&[PutBlob { hash: *hash, sha256, body: Body::Bytes(bytes) }]).await.map(|_| ())
    }

    /// Send a secret: it goes to the node's private `secrets/` (0700, file
    /// 0600 from its creation), never into the shared blob store. `hash` is
    /// its keyed hash; the node checks the length of what arrived.
    pub async fn put_secret(&self, hash: &Digest, bytes: &[u8]) -> Result<(), NodeError> {
        let len = bytes.len().to_string();
        let mut src = bytes;
        let out = self.host.upload(&self.held(&["put-secret", &hash.hex(), &len]), &mut src).await?;
        self.check(&format!("put-secret {hash}"), out)?;
        Ok(())
    }

    /// Materialise generation `gen` of `phase` from store blobs (idempotent).
    pub async fn stage(&self, gen: u64, phase: &str, manifest: &Manifest) -> Result<(), NodeError> {
        self.stage_phases(gen, &[(phase, manifest)]).await
    }

    /// [`Node::stage`] for several phases in one command, in their order;
    /// a failure leaves the phases before it staged and names its phase.
    pub async fn stage_phases(&self, gen: u64, phases: &[(&str, &Manifest)]) -> Result<(), NodeError> {
        let mut text = String::new();
        for (_, m) in phases {
            text += &m.render().map_err(|e| NodeError::Manifest(e, self.host.name().to_string()))?;
        }
        let gen = gen.to_string();
        let mut args = vec!["stage", gen.as_str()];
        args.extend(phases.iter().map(|(p, _)| *p));
        self.run_held(&args, Some(text.as_bytes())).await?;
        Ok(())
    }

    /// Point `phase` at generation `gen` (`None`: remove the phase) with one
    /// rename; fix managed symlinks and directories.
    pub async fn switch(&self, gen: Option<u64>, phase: &str) -> Result<(), NodeError> {
        let g = gen.map_or("none".to_string(), |g| g.to_string());
        self.run_held(&["switch", &g, phase], None).await?;
        Ok(())
    }

    /// Switch `phase` back to what it was (`old` from [`NodeStatus::phases`]
    /// taken before the run; `None`: it did not exist).
    pub async fn rollback_phase(&self, phase: &str, old: Option<u64>) -> Result<(), NodeError> {
        let g = old.map_or("none".to_string(), |g| g.to_string());
        self.run_held(&["rollback-phase", phase, &g], None).await?;
        Ok(())
    }

    /// The manifest a generation of a phase was staged with.
    pub async fn manifest(&self, gen: u64, phase: &str) -> Result<Manifest, NodeError> {
        let out = self.run(&["manifest", &gen.to_string(), phase], None).await?;
        Manifest::parse(&out.stdout_str()).map_err(|e| NodeError::Manifest(e, self.host.name().to_string()))
    }

    /// Record generation `gen` (node hash `hash`) as committed, with its
    /// phase record (`record` empty: the generation keeps its own).
    pub async fn commit(&self, gen: u64, hash: &Digest, record: &[u8]) -> Result<(), NodeError> {
        self.run_held(&["commit", &gen.to_string(), &hash.hex()], Some(record)).await?;
        Ok(())
    }

    /// The committed generation's phase record and the manifest of every
    /// linked phase, as `@record` / `@manifest PHASE` sections.
    pub async fn state(&self) -> Result<String, NodeError> {
        Ok(self.run(&["state"], None).await?.stdout_str())
    }

    /// A blob of the node's store, if it is there and at most `max` bytes
    /// (secrets are kept apart and never read back). Read-only: no lock.
    pub async fn read_blob(&self, hash: &Digest, max: u64) -> Result<StoredBlob, NodeError> {
        let f = shell_quote(&format!("{}/store/{}", self.root(), hash.hex()));
        let cmd = format!("[ -f {f} ] || exit 3; s=$(stat -c %s {f}); echo \"$s\"; [ \"$s\" -gt {max} ] || cat {f}");
        let out = self.host.exec(&cmd, None).await?;
        if out.status == 3 {
            return Ok(StoredBlob::Missing);
        }
        let out = self.check("read blob", out)?;
        let Some(nl) = out.stdout.iter().position(|&b| b == b'\n') else {
            return Ok(StoredBlob::Missing);
        };
        let size: u64 = String::from_utf8_lossy(&out.stdout[..nl]).trim().parse().unwrap_or(0);
        if size > max {
            return Ok(StoredBlob::TooBig(size));
        }
        Ok(StoredBlob::Bytes(out.stdout[nl + 1..].to_vec()))
    }

    /// The last step of a reset, once every phase is unlinked: the
    /// directories switches created and the whole state directory removed.
    /// Returns the directories removed.
    pub async fn forget(&self) -> Result<Vec<String>, NodeError> {
        let out = self.run_held(&["forget"], None).await?;
        Ok(out.stdout_str().lines().filter_map(|l| l.strip_prefix("removed ")).map(str::to_string).collect())
    }

    /// The phase record generation `gen` was committed with.
    pub async fn phase_record(&self, gen: u64) -> Result<String, NodeError> {
        Ok(self.run(&["phase-record", &gen.to_string()], None).await?.stdout_str())
    }

    /// `N[ (current)]: phase phase ...` per generation.
    pub async fn list_generations(&self) -> Result<Vec<String>, NodeError> {
        let out = self.run(&["list-generations"], None).await?;
        Ok(out.stdout_str().lines().map(str::to_string).collect())
    }

    /// Run `units` operations (see [`super::plan::UnitPlan::after_switch`]).
    /// A unit that fails to start/restart/reload comes back as
    /// [`NodeError::UnitFailed`] with its last journal lines.
    pub async fn units(&self, ops: &[String]) -> Result<(), NodeError> {
        self.units_within(ops, None).await
    }

    /// [`Node::units`], killed after `deadline` (a unit whose start hangs
    /// must not hang the run): then a [`NodeError::Command`] saying so.
    pub async fn units_within(&self, ops: &[String], deadline: Option<Duration>) -> Result<(), NodeError> {
        if ops.is_empty() {
            return Ok(());
        }
        let mut args = vec!["units"];
        args.extend(ops.iter().map(String::as_str));
        let cmd = match deadline {
            Some(d) => format!("timeout -k 10 {} {}", d.as_secs().max(1), self.held(&args)),
            None => self.held(&args),
        };
        let out = self.host.exec(&cmd, None).await?;
        if let (NodeExit::TimedOut, Some(d)) = (NodeExit::of(out.status), deadline) {
            return Err(NodeError::Command {
                host: self.host.name().to_string(),
                command: args.join(" "),
                status: out.status,
                message: format!("did not finish within {} s (its deadline) and was killed", d.as_secs()),
            });
        }
        if NodeExit::of(out.status) == NodeExit::UnitFailed {
            return Err(NodeError::UnitFailed {
                host: self.host.name().to_string(),
                what: ops.join(" "),
                journal: String::from_utf8_lossy(&out.stderr).trim_end().to_string(),
            });
        }
        self.check(&args.join(" "), out)?;
        Ok(())
    }

    /// One phase on this node, the way a run activates it: stop/disable
    /// units that go away, flip the phase link, then daemon-reload and
    /// reload/restart/start exactly what [`plan_units`] says. `old` is the
    /// manifest the phase link pointed at before (`None`: no such phase);
    /// `changed` the files changed in this phase *and earlier ones* (restart
    /// triggers may name those). Hooks and checks are the caller's.
    pub async fn switch_phase(
        &self,
        gen: u64,
        phase: &str,
        old: Option<&Manifest>,
        new: &Manifest,
        changed: &BTreeSet<PathBuf>,
    ) -> Result<UnitPlan, NodeError> {
        let plan = plan_units(old.map_or(&[][..], |m| &m.units[..]), &new.units, changed);
        self.units(&plan.before_switch()).await?;
        self.switch(Some(gen), phase).await?;
        self.units(&plan.after_switch()).await?;
        Ok(plan)
    }

    /// Every generation directory with the generations its phase record
    /// uses (see [`super::gc::plan_generations`]).
    pub async fn gc_info(&self) -> Result<Vec<NodeGeneration>, NodeError> {
        let out = self.run(&["gc-info"], None).await?;
        parse_info(&out.stdout_str()).map_err(|answer| self.protocol("gc-info", answer))
    }

    /// Remove generations `remove` (the node refuses the committed and
    /// linked ones), then every blob and secret no remaining generation
    /// names. Must run under the lock. `dry_run`: report, remove nothing.
    pub async fn gc(&self, remove: &[u64], dry_run: bool) -> Result<GcReport, NodeError> {
        let gens: Vec<String> = remove.iter().map(u64::to_string).collect();
        let mut args = vec!["gc"];
        if dry_run {
            args.push("--dry-run");
        }
        args.extend(gens.iter().map(String::as_str));
        let out = self.run_held(&args, None).await?;
        GcReport::parse(&out.stdout_str()).map_err(|answer| self.protocol("gc", answer))
    }

    fn protocol(&self, command: &str, answer: String) -> NodeError {
        NodeError::Protocol { host: self.host.name().to_string(), command: command.into(), answer }
    }

    /// `journalctl -u UNIT -n LINES --no-pager`.
    pub async fn journal(&self, unit: &str, lines: u32) -> Result<String, NodeError> {
        let out = self.run(&["journal", unit, &lines.to_string()], None).await?;
        Ok(out.stdout_str())
    }
}
