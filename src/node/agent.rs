//! [`Node`]: the deployer's handle on one node's kdeploy state — every method
//! is one command of the node program (one round trip, one SSH channel),
//! over any [`Host`]: a [`Request`] encoded by the protocol module, sent,
//! and its reply or refusal decoded there (`protocol/`); nothing here reads
//! the program's text itself. Nothing here decides *what* to do either;
//! orchestration does. Each handle has its own lock token (see `lock.rs`):
//! the commands that change the node carry it (`--held TOKEN`), and what
//! else the run does on the node (hooks, checks, membership commands) goes
//! through the node program's `run` with it ([`Node::exec_held`]), so all
//! of it is refused once the lock is not this run's.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use super::exit::NodeExit;
use super::gc::{GcReport, NodeGeneration};
use super::lock::{new_token, NodeLock};
use super::manifest::{Manifest, ManifestError};
use super::plan::{plan_units, UnitPlan};
use super::protocol::request::{fetch_input, have_input, is_sha256, put_secrets_input};
use super::protocol::{
    refusal, reply, ArmedStep, BadRequest, Code, Failure, Malformed, NodeState, NodeStatus, NotFetched, PhaseRecord,
    Request, StoredBlob, WantedBlob, VERSION,
};
use super::put_stream::{Body, PutBlob, PutStream, Sha256};
use super::script;
use crate::store::Digest;
use crate::transport::{shell_quote, Error as TransportError, Host, Output, Process};

#[derive(Debug, thiserror::Error)]
pub enum NodeError {
    #[error(transparent)]
    Transport(#[from] TransportError),
    #[error("{host}: {command}: {message}")]
    Command { host: String, command: String, status: u32, message: String },
    /// Another live run holds the node (code `locked`), or the commands of
    /// the run this one took the lock over from still run (code `busy`):
    /// either way, try again later.
    #[error("{host}: is locked by another kdeploy run: {owner}")]
    Locked { host: String, owner: String },
    /// The node refused a command that changes it: this run's lock token
    /// is not the live holder's (code `lock-lost`).
    #[error(
        "{host}: this run does not hold the node's lock any more (lost while the deployer was paused or cut \
         off for 30 s or more; held now by: {holder})"
    )]
    LockLost { host: String, holder: String },
    /// `units`: these units failed (code `unit-failed`); their status and
    /// journal in `journal`.
    #[error("{host}: unit(s) failed to {what}:\n{journal}")]
    UnitFailed { host: String, what: String, units: Vec<String>, journal: String },
    /// What a read asked for is not on the node (code `not-found`).
    #[error("{host}: {command}: {what}")]
    NotFound { host: String, command: String, what: String },
    /// The node lacks a tool or feature the node program needs (code
    /// `unsupported`, from the check when it is installed).
    #[error("{host}: cannot run the kdeploy node program: {what}")]
    Unsupported { host: String, what: String },
    /// The program on the node speaks another protocol (code `version`).
    #[error("{host}: the node program speaks protocol {node}, this deployer {VERSION}")]
    Version { host: String, node: String },
    #[error("{host}: {0}", host = .1)]
    BadRequest(BadRequest, String),
    #[error("{host}: {0}", host = .1)]
    Manifest(ManifestError, String),
    #[error("{host}: unexpected answer to {command}: {answer}")]
    Protocol { host: String, command: String, answer: String },
}

/// What the command opening a node prints when the node program is not
/// there yet.
const NOT_INSTALLED: &str = "kdeploy-node-not-installed";

/// A put stream from this size up runs as a bulk upload
/// ([`Host::upload_bulk`]: over SSH, a connection of its own); a run's
/// small puts (a changed config file, a secret) keep to the node's
/// connection and cost no handshake.
pub const BULK_FROM: u64 = 1 << 20;

/// The node program on one host. Create with [`Node::install`].
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
    /// Make sure the node program is on the node (one round trip); when it
    /// is installed now, the node is checked for what it needs first.
    pub async fn install(host: &'h dyn Host) -> Result<Node<'h>, NodeError> {
        Self::install_with_prefix(host, "").await
    }

    /// As [`Node::install`], with every node path below `prefix` (tests).
    pub async fn install_with_prefix(host: &'h dyn Host, prefix: &str) -> Result<Node<'h>, NodeError> {
        let node = Node::new(host, prefix);
        node.install_here().await?;
        Ok(node)
    }

    async fn install_here(&self) -> Result<(), NodeError> {
        let out = self.host.exec(&script::install_command(&self.prefix), Some(script::SCRIPT.as_bytes())).await?;
        self.check("install", out)?;
        Ok(())
    }

    fn new(host: &'h dyn Host, prefix: &str) -> Node<'h> {
        Node { host, prefix: prefix.to_string(), token: new_token(), lost: Arc::default() }
    }

    pub fn host(&self) -> &'h dyn Host {
        self.host
    }

    fn host_name(&self) -> String {
        self.host.name().to_string()
    }

    /// The command line running the node program with `args` (raw: the
    /// methods below build theirs from a [`Request`]; tests call the
    /// program by hand with this).
    pub fn command(&self, args: &[&str]) -> String {
        let mut s = String::new();
        if !self.prefix.is_empty() {
            s += &format!("KDEPLOY_PREFIX={} ", shell_quote(&self.prefix));
        }
        s += &format!("sh {} --protocol {VERSION}", shell_quote(&script::script_path(&self.prefix)));
        for a in args {
            s.push(' ');
            s += &shell_quote(a);
        }
        s
    }

    /// The command line of `req`; one that changes the node carries this
    /// handle's token, and is refused unless it holds the node's lock.
    fn line(&self, req: &Request) -> Result<String, NodeError> {
        let argv = req.argv().map_err(|e| NodeError::BadRequest(e, self.host_name()))?;
        let mut args: Vec<&str> = Vec::new();
        if req.changes_node() {
            args.extend(["--held", self.token.as_str()]);
        }
        args.extend(argv.iter().map(String::as_str));
        Ok(self.command(&args))
    }

    /// How errors name `req`: the command and its arguments.
    fn shown(req: &Request) -> String {
        req.argv().map_or_else(|_| req.name().to_string(), |a| a.join(" "))
    }

    /// `out` when it succeeded; else its refusal as a [`NodeError`].
    fn check(&self, what: &str, out: Output) -> Result<Output, NodeError> {
        if out.success() {
            return Ok(out);
        }
        let failure = refusal::decode(out.status, &out.stderr).map_err(|answer| self.protocol(what, answer.0))?;
        Err(self.failed(what, out.status, failure))
    }

    fn failed(&self, what: &str, status: u32, failure: Failure) -> NodeError {
        let host = self.host_name();
        let command = what.to_string();
        let Failure::Refused { refusals, message } = failure else {
            return NodeError::Command { host, command, status, message: failure.message().to_string() };
        };
        let Some(last) = refusals.last() else { return NodeError::Command { host, command, status, message } };
        let detail = last.detail.clone();
        match last.code {
            Code::Failed => NodeError::Command { host, command, status, message },
            Code::UnitFailed => {
                let units = refusals.iter().filter_map(|r| r.unit()).map(|(u, _)| u.to_string()).collect();
                NodeError::UnitFailed { host, what: command, units, journal: message }
            }
            Code::NotFound => NodeError::NotFound { host, command, what: detail },
            Code::Unsupported => NodeError::Unsupported { host, what: detail },
            Code::Locked => NodeError::Locked { host, owner: detail },
            Code::Busy => NodeError::Locked { host, owner: last.sentence() },
            Code::Version => NodeError::Version { host, node: detail },
            Code::LockLost => {
                self.lost.store(true, Ordering::SeqCst);
                NodeError::LockLost { host, holder: detail }
            }
        }
    }

    fn protocol(&self, command: &str, answer: String) -> NodeError {
        NodeError::Protocol { host: self.host_name(), command: command.into(), answer }
    }

    fn malformed(&self, req: &Request) -> impl Fn(Malformed) -> NodeError + '_ {
        let command = req.name();
        move |m| self.protocol(command, m.0)
    }

    /// Send `req` (with `stdin`) and wait for it to succeed.
    async fn call(&self, req: &Request<'_>, stdin: Option<&[u8]>) -> Result<Output, NodeError> {
        let out = self.host.exec(&self.line(req)?, stdin).await?;
        self.check(&Self::shown(req), out)
    }

    /// [`Node::call`] of a command that prints nothing on success.
    async fn call_quiet(&self, req: &Request<'_>, stdin: Option<&[u8]>) -> Result<(), NodeError> {
        let out = self.call(req, stdin).await?;
        reply::nothing(&out.stdout_str()).map_err(self.malformed(req))
    }

    /// Run `script` under sh on the node while this handle holds the
    /// node's lock (the node program's `run`): how hooks, checks and
    /// membership commands run. Its output whatever its status, or
    /// [`NodeError::LockLost`] when the node refused to start it.
    pub async fn exec_held(&self, script: &str) -> Result<Output, NodeError> {
        let out = self.host.exec(&self.run_line(script)?, None).await?;
        self.held_output(out)
    }

    /// [`Node::exec_held`] with `input` streamed to the script's stdin,
    /// memory bounded whatever its size (a restore's snapshot).
    pub async fn exec_held_input(
        &self,
        script: &str,
        input: &mut (dyn std::io::Read + Send),
    ) -> Result<Output, NodeError> {
        let out = self.host.upload(&self.run_line(script)?, input).await?;
        self.held_output(out)
    }

    /// Start `script` as [`Node::exec_held`] does, for a caller that
    /// streams what it prints (a snapshot); [`Node::held_output`] then
    /// reads how it ended.
    pub async fn spawn_held(&self, script: &str) -> Result<Process, NodeError> {
        Ok(self.host.spawn(&self.run_line(script)?).await?)
    }

    /// How a command run under the lock ended: its output, or
    /// [`NodeError::LockLost`] when the node refused to start it.
    pub fn held_output(&self, out: Output) -> Result<Output, NodeError> {
        match refusal::decode_run(out.status, &out.stderr) {
            Some(r) => {
                let failure = Failure::Refused { message: r.sentence(), refusals: vec![r] };
                Err(self.failed("run", out.status, failure))
            }
            None => Ok(out),
        }
    }

    fn run_line(&self, script: &str) -> Result<String, NodeError> {
        self.line(&Request::Run { argv: vec!["sh", "-c", script] })
    }

    /// Take the node lock for as long as the returned guard (and the
    /// connection) lives. `owner` is shown to a run that finds it taken.
    pub async fn lock(&self, owner: &str) -> Result<NodeLock, NodeError> {
        let req = Request::Lock { owner, token: &self.token, status: false, verify: false };
        let p = self.host.spawn(&self.line(&req)?).await?;
        let (lock, _) = self.locked(p).await?.ok_or_else(|| self.protocol("lock", NOT_INSTALLED.into()))?;
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
        let lock = node.line(&Request::Lock { owner, token: &node.token, status: true, verify: true })?;
        let path = shell_quote(&script::script_path(prefix));
        let p = host.spawn(&format!("if [ -f {path} ]; then {lock}; else echo {NOT_INSTALLED}; fi")).await?;
        let (guard, text) = match node.locked(p).await? {
            Some(held) => held,
            None => {
                node.install_here().await?;
                node.locked(host.spawn(&lock).await?)
                    .await?
                    .ok_or_else(|| node.protocol("lock", NOT_INSTALLED.into()))?
            }
        };
        let status = reply::status(&text).map_err(|m| node.protocol("lock", m.0))?;
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
        if out.success() {
            return Err(self.protocol("lock", format!("ended without `locked` after {before:?}")));
        }
        Err(self.check("lock", out).err().unwrap_or_else(|| self.protocol("lock", "no answer".into())))
    }

    /// Committed generation, next free number, phase links.
    pub async fn status(&self) -> Result<NodeStatus, NodeError> {
        self.status_with(false).await
    }

    /// [`Node::status`] plus every [`super::Drift`] from the linked generations.
    pub async fn status_verified(&self) -> Result<NodeStatus, NodeError> {
        self.status_with(true).await
    }

    /// `status --verify` on `host` without installing anything (the
    /// installed program when this version is there, else the same text
    /// sent on stdin): `kdeploy status` promises to change nothing.
    pub async fn status_read_only(host: &'h dyn Host, prefix: &str) -> Result<NodeStatus, NodeError> {
        let node = Node::new(host, prefix);
        let req = Request::Status { verify: true };
        let argv = req.argv().map_err(|e| NodeError::BadRequest(e, node.host_name()))?;
        let line = script::read_only_command(prefix, &argv);
        let out = host.exec(&line, Some(script::SCRIPT.as_bytes())).await?;
        let out = node.check(&Self::shown(&req), out)?;
        reply::status(&out.stdout_str()).map_err(node.malformed(&req))
    }

    /// What `status` prints, read over a new connection
    /// ([`Host::exec_fresh`]): whether a node cut off from this run takes
    /// connections again, and what it did meanwhile.
    pub async fn status_fresh(&self) -> Result<NodeStatus, NodeError> {
        let req = Request::Status { verify: false };
        let out = self.host.exec_fresh(&self.line(&req)?).await?;
        let out = self.check(&Self::shown(&req), out)?;
        reply::status(&out.stdout_str()).map_err(self.malformed(&req))
    }

    async fn status_with(&self, verify: bool) -> Result<NodeStatus, NodeError> {
        let req = Request::Status { verify };
        let out = self.call(&req, None).await?;
        reply::status(&out.stdout_str()).map_err(self.malformed(&req))
    }

    /// Which of `blobs` the node lacks: absent, or there with another size
    /// (or sha256, when given) — such a blob is removed on the node and
    /// comes back here, to be sent again.
    pub async fn missing(&self, blobs: &[WantedBlob]) -> Result<Vec<Digest>, NodeError> {
        let input = have_input(blobs).map_err(|e| NodeError::BadRequest(e, self.host_name()))?;
        let out = self.call(&Request::Have, Some(input.as_bytes())).await?;
        reply::hashes(&out.stdout_str()).map_err(self.malformed(&Request::Have))
    }

    /// A bulk upload ([`Node::put`] of [`BULK_FROM`] bytes or more) is
    /// coming: its connection may be made now, beside the commands before it.
    pub fn expect_bulk(&self) {
        self.host.expect_bulk();
    }

    /// Stream `blobs` into the store, all in one command; the node checks
    /// the sha256 of each (decompressed, if sent compressed) before any
    /// becomes visible under its hash. Returns the body bytes sent.
    /// [`BULK_FROM`] bytes or more go as a bulk upload.
    pub async fn put(&self, blobs: &[PutBlob<'_>]) -> Result<u64, NodeError> {
        if blobs.is_empty() {
            return Ok(0);
        }
        // (one worked out while the stream goes is checked when it is there)
        for b in blobs {
            if let Sha256::Known(s) = b.sha256 {
                if !is_sha256(s) {
                    let why = format!("bad sha256 {s:?} for {}", b.hash);
                    return Err(NodeError::BadRequest(BadRequest { command: "put", why }, self.host_name()));
                }
            }
        }
        let mut stream = PutStream::new(blobs);
        let command = self.line(&Request::Put)?;
        let out = match blobs.iter().map(PutBlob::body_len).sum::<u64>() >= BULK_FROM {
            true => self.host.upload_bulk(&command, &mut stream).await?,
            false => self.host.upload(&command, &mut stream).await?,
        };
        let what = match blobs {
            [one] => format!("put {}", one.hash),
            _ => format!("put ({} blobs)", blobs.len()),
        };
        let out = self.check(&what, out)?;
        reply::nothing(&out.stdout_str()).map_err(self.malformed(&Request::Put))?;
        Ok(stream.sent)
    }

    /// Have the node fetch `blobs` (hash, sha256 hex, size) it lacks from
    /// the binary cache at `base`, each at most its size; returns those it
    /// could not get (sent over SSH instead), which of them the cache holds
    /// wrong, and what the node said about them.
    pub async fn fetch(&self, base: &str, blobs: &[(Digest, &str, u64)]) -> Result<NotFetched, NodeError> {
        let input = fetch_input(blobs).map_err(|e| NodeError::BadRequest(e, self.host_name()))?;
        let req = Request::Fetch { url: base };
        let out = self.call(&req, Some(input.as_bytes())).await?;
        reply::not_fetched(&out.stdout_str(), &String::from_utf8_lossy(&out.stderr)).map_err(self.malformed(&req))
    }

    /// [`Node::put`] from memory.
    pub async fn put_bytes(&self, hash: &Digest, sha256: &str, bytes: &[u8]) -> Result<(), NodeError> {
        self.put(&[PutBlob { hash: *hash, sha256: Sha256::Known(sha256), body: Body::Bytes(bytes) }]).await.map(|_| ())
    }

    /// Send secrets, all in one command: they go to the node's private
    /// `secrets/` (0700, each file 0600 from its creation), never into the
    /// shared blob store. Each is named by its keyed hash; the node checks
    /// the length of what arrived.
    pub async fn put_secrets(&self, secrets: &[(Digest, &[u8])]) -> Result<(), NodeError> {
        if secrets.is_empty() {
            return Ok(());
        }
        let req = Request::PutSecrets;
        let input = put_secrets_input(secrets);
        let out = self.host.upload(&self.line(&req)?, &mut input.as_slice()).await?;
        let out = self.check(&Self::shown(&req), out)?;
        reply::nothing(&out.stdout_str()).map_err(self.malformed(&req))
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
            text += &m.render().map_err(|e| NodeError::Manifest(e, self.host_name()))?;
        }
        let req = Request::Stage { generation: gen, phases: phases.iter().map(|(p, _)| *p).collect() };
        self.call_quiet(&req, Some(text.as_bytes())).await
    }

    /// Point `phase` at generation `gen` (`None`: remove the phase) with one
    /// rename; fix managed symlinks and directories. Rolling a phase back
    /// is the same: a switch to the generation it was at.
    pub async fn switch(&self, gen: Option<u64>, phase: &str) -> Result<(), NodeError> {
        self.call_quiet(&Request::Switch { generation: gen, phase }, None).await
    }

    /// Arm the node's self-rollback (see the program's `arm`): unless
    /// [`Node::disarm`]ed, the node moves each of `steps` back by itself
    /// (in that order) `within` from now, once no live run holds its lock.
    pub async fn arm(&self, id: &str, within: Duration, steps: &[ArmedStep]) -> Result<(), NodeError> {
        self.call_quiet(&Request::Arm { id, seconds: within.as_secs().max(1), steps }, None).await
    }

    /// The id this run arms the node with before switching `phase`: its
    /// lock token and the phase, hashed, so that confirming or undoing a
    /// step needs nothing kept.
    pub fn arming_id(&self, phase: &str) -> String {
        let h = blake3::hash(format!("{}\0{phase}", self.token).as_bytes());
        hex::encode(&h.as_bytes()[..16])
    }

    /// Take an armed phase back ([`Node::arm`]): the deployer judges it
    /// itself again. [`NodeError::NotFound`] when `id` is not armed.
    pub async fn disarm(&self, id: &str) -> Result<(), NodeError> {
        self.call_quiet(&Request::Disarm { id }, None).await
    }

    /// [`Node::disarm`] over a new connection ([`Host::exec_fresh`]): the
    /// confirmation that a change left the node reachable. A transport error
    /// means the node takes no new connection.
    pub async fn confirm(&self, id: &str) -> Result<(), NodeError> {
        let req = Request::Disarm { id };
        let out = self.host.exec_fresh(&self.line(&req)?).await?;
        let out = self.check(&Self::shown(&req), out)?;
        reply::nothing(&out.stdout_str()).map_err(self.malformed(&req))
    }

    /// The manifest a generation of a phase was staged with.
    pub async fn manifest(&self, gen: u64, phase: &str) -> Result<Manifest, NodeError> {
        let out = self.call(&Request::Manifest { generation: gen, phase }, None).await?;
        Manifest::parse(&out.stdout_str()).map_err(|e| NodeError::Manifest(e, self.host_name()))
    }

    /// Record generation `gen` (node hash `hash`) as committed, with its
    /// phase record (`None`: the generation keeps its own, as a rollback
    /// does).
    pub async fn commit(&self, gen: u64, hash: &Digest, record: Option<&PhaseRecord>) -> Result<(), NodeError> {
        let text = record.map(reply::render_record).unwrap_or_default();
        self.call_quiet(&Request::Commit { generation: gen, hash: *hash }, Some(text.as_bytes())).await
    }

    /// The committed generation's phase record and the manifest of every
    /// linked phase.
    pub async fn state(&self) -> Result<NodeState, NodeError> {
        let out = self.call(&Request::State, None).await?;
        reply::state(&out.stdout_str()).map_err(self.malformed(&Request::State))
    }

    /// A blob of the node's store, if it is there and at most `max` bytes
    /// (secrets are kept apart and never read back). Read-only: no lock.
    pub async fn read_blob(&self, hash: &Digest, max: u64) -> Result<StoredBlob, NodeError> {
        let req = Request::Blob { hash: *hash, max };
        match self.call(&req, None).await {
            Ok(out) => reply::blob(&out.stdout, max).map_err(self.malformed(&req)),
            Err(NodeError::NotFound { .. }) => Ok(StoredBlob::Missing),
            Err(e) => Err(e),
        }
    }

    /// The last step of a reset, once every phase is unlinked: the
    /// directories switches created and the whole state directory removed.
    /// Returns the directories removed.
    pub async fn forget(&self) -> Result<Vec<String>, NodeError> {
        let out = self.call(&Request::Forget, None).await?;
        reply::forget(&out.stdout_str()).map_err(self.malformed(&Request::Forget))
    }

    /// The phase record generation `gen` was committed with.
    pub async fn phase_record(&self, gen: u64) -> Result<PhaseRecord, NodeError> {
        let req = Request::PhaseRecord { generation: gen };
        let out = self.call(&req, None).await?;
        reply::phase_record(&out.stdout_str()).map_err(self.malformed(&req))
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
        let req = Request::Units { ops };
        let line = self.line(&req)?;
        let cmd = match deadline {
            Some(d) => format!("timeout -k 10 {} {line}", d.as_secs().max(1)),
            None => line,
        };
        let out = self.host.exec(&cmd, None).await?;
        let what = Self::shown(&req);
        if let (NodeExit::TimedOut, Some(d)) = (NodeExit::of(out.status), deadline) {
            return Err(NodeError::Command {
                host: self.host_name(),
                command: what,
                status: out.status,
                message: format!("did not finish within {} s (its deadline) and was killed", d.as_secs()),
            });
        }
        let out = self.check(&what, out).map_err(|e| match e {
            NodeError::UnitFailed { host, units, journal, .. } => {
                NodeError::UnitFailed { host, what: ops.join(" "), units, journal }
            }
            e => e,
        })?;
        reply::nothing(&out.stdout_str()).map_err(self.malformed(&req))
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
        let out = self.call(&Request::GcInfo, None).await?;
        reply::gc_info(&out.stdout_str()).map_err(self.malformed(&Request::GcInfo))
    }

    /// Remove generations `remove` (the node refuses the committed and
    /// linked ones), then every blob and secret no remaining generation
    /// names. Must run under the lock. `dry_run`: report, remove nothing.
    pub async fn gc(&self, remove: &[u64], dry_run: bool) -> Result<GcReport, NodeError> {
        let req = Request::Gc { remove, dry_run };
        let out = self.call(&req, None).await?;
        reply::gc(&out.stdout_str()).map_err(self.malformed(&req))
    }
}
