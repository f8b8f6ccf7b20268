//! The connection keeper itself (`kdeploy keeper`): holds the SSH
//! connections runs made, so that the next run within `--persist` seconds
//! skips the TCP, key exchange, login and the node's session setup (PAM,
//! motd) that each new connection costs — OpenSSH's ControlPersist, which
//! Ansible turns on by default. Every request is one socket connection
//! ([`super::wire`]); a command runs on the kept connection exactly as a
//! run's own [`SshHost::spawn`] would, its bytes passed through both ways.
//! A run that goes away (killed, or done) closes its socket: the command's
//! stdin ends there, which is what lets go of a node's lock. A kept
//! connection serves another run only while it is open and known_hosts
//! still names the key the node proved at connect time. A connection no
//! command has used for `persist` is closed (a keeper kept busy by runs
//! against other clusters does not hold every node it ever reached), and
//! the keeper exits once no request has run for `persist`.

use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use tokio::io::{AsyncWriteExt, BufReader};
use tokio::net::unix::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::{UnixListener, UnixStream};

use super::place::euid;
use super::wire::{self, Request, Target};
use crate::transport::{connect_one, Error, Host, Process, SshHost};

/// One node's connection (made at most once at a time), how many
/// requests use it now and when the last one let go.
#[derive(Default)]
struct Slot {
    host: tokio::sync::Mutex<Option<Arc<SshHost>>>,
    users: AtomicUsize,
    used: Mutex<Option<Instant>>,
}

impl Slot {
    fn unused_for(&self, persist: Duration) -> bool {
        self.users.load(Ordering::SeqCst) == 0
            && self.used.lock().unwrap_or_else(|p| p.into_inner()).is_none_or(|t| t.elapsed() >= persist)
    }
}

struct Keeper {
    slots: Mutex<HashMap<String, Arc<Slot>>>,
    /// Requests running now, and when the last one ended.
    running: AtomicUsize,
    last: Mutex<Instant>,
}

/// Counts a request as running for as long as it lives.
struct Running<'a>(&'a Keeper);

impl<'a> Running<'a> {
    fn new(k: &'a Keeper) -> Self {
        k.running.fetch_add(1, Ordering::SeqCst);
        Running(k)
    }
}

impl Drop for Running<'_> {
    fn drop(&mut self) {
        *self.0.last.lock().unwrap_or_else(|p| p.into_inner()) = Instant::now();
        self.0.running.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Serve on `socket` until idle for `persist`. Returns at once when another
/// keeper holds the socket's lock file (it serves).
pub async fn serve(socket: &Path, persist: Duration) -> std::io::Result<()> {
    let lock =
        std::fs::OpenOptions::new().create(true).truncate(false).write(true).open(socket.with_extension("lock"))?;
    if lock.try_lock().is_err() {
        return Ok(());
    }
    let _ = std::fs::remove_file(socket);
    let listener = UnixListener::bind(socket)?;
    // the directory is 0700 already; the socket too, in case it moves
    std::fs::set_permissions(socket, std::os::unix::fs::PermissionsExt::from_mode(0o600))?;
    let keeper =
        Arc::new(Keeper { slots: Default::default(), running: AtomicUsize::new(0), last: Instant::now().into() });
    let mut tick = tokio::time::interval(Duration::from_millis(500));
    loop {
        tokio::select! {
            accepted = listener.accept() => if let Ok((stream, _)) = accepted {
                let k = keeper.clone();
                tokio::spawn(async move { k.handle(stream).await });
            },
            _ = tick.tick() => {
                if keeper.idle_for(persist) { break }
                keeper.close_unused(persist).await;
            },
        }
    }
    let _ = std::fs::remove_file(socket);
    keeper.close_all().await;
    Ok(())
}

impl Keeper {
    fn idle_for(&self, persist: Duration) -> bool {
        self.running.load(Ordering::SeqCst) == 0
            && self.last.lock().unwrap_or_else(|p| p.into_inner()).elapsed() >= persist
    }

    fn all_slots(&self) -> Vec<Arc<Slot>> {
        self.slots.lock().unwrap_or_else(|p| p.into_inner()).values().cloned().collect()
    }

    async fn close_all(&self) {
        for s in self.all_slots() {
            if let Some(h) = s.host.lock().await.take() {
                let _ = h.close().await;
            }
        }
    }

    /// Close the connections no request has used for `persist` (a slot
    /// being connected or handed out right now is busy: skipped).
    async fn close_unused(&self, persist: Duration) {
        for s in self.all_slots() {
            let Ok(mut kept) = s.host.try_lock() else { continue };
            if s.unused_for(persist) {
                if let Some(h) = kept.take() {
                    let _ = h.close().await;
                }
            }
        }
    }

    async fn handle(&self, stream: UnixStream) {
        let _running = Running::new(self);
        // only this user: the directory says so, the peer's credentials too
        if !stream.peer_cred().is_ok_and(|c| c.uid() == euid()) {
            return;
        }
        // (buffered: the request line is read up to its newline, and the
        // frames after it from the same buffer)
        let (from_run, mut to_run) = stream.into_split();
        let mut from_run = BufReader::new(from_run);
        let Ok(Ok(request)) = tokio::time::timeout(Duration::from_secs(10), wire::read_request(&mut from_run)).await
        else {
            return;
        };
        match request {
            Request::Connect { target } => {
                let answer = self.host(&target, Probe::Yes).await.map(drop);
                let _ = wire::write_answer(&mut to_run, &answer).await;
            }
            Request::Spawn { target, command } => {
                let started = match self.host(&target, Probe::No).await {
                    Ok(lease) => lease.host.spawn(&command).await.map(|p| (p, lease)),
                    Err(e) => Err(e),
                };
                let answer = started.as_ref().map(drop).map_err(Clone::clone);
                if wire::write_answer(&mut to_run, &answer).await.is_ok() {
                    if let Ok((p, _lease)) = started {
                        pump(p, from_run, to_run).await;
                    }
                }
            }
        }
    }

    /// The kept connection for `target` if it may still serve (with
    /// [`Probe::Yes`], and it still answers: a node rebooted or cut off
    /// since leaves a connection that looks open; a non-root login's sudo
    /// is proved again), else a new one (made and checked as a run makes
    /// its own).
    async fn host(&self, target: &Target, probe: Probe) -> Result<Lease, Error> {
        let key = serde_json::to_string(target).map_err(|e| Error::channel(&target.name, e))?;
        let slot = self.slots.lock().unwrap_or_else(|p| p.into_inner()).entry(key).or_default().clone();
        let busy = Busy::of(slot.clone());
        let mut kept = slot.host.lock().await;
        if let Some(h) = kept.as_ref() {
            if h.still_trusted() && (probe == Probe::No || h.answers(PROBE_WAIT).await) {
                if probe == Probe::Yes {
                    h.prove_escalation_again().await?;
                }
                return Ok(Lease { host: h.clone(), _busy: busy });
            }
            let _ = h.close().await;
            *kept = None;
        }
        let t = target.node_target()?;
        let host = Arc::new(connect_one(&t).await?);
        *kept = Some(host.clone());
        Ok(Lease { host, _busy: busy })
    }
}

/// A kept connection handed to one request.
struct Lease {
    host: Arc<SshHost>,
    _busy: Busy,
}

/// Counts a slot as in use, so never closed as unused, while it lives
/// (from before its connection is tried or made until the request ends).
struct Busy(Arc<Slot>);

impl Busy {
    fn of(slot: Arc<Slot>) -> Self {
        slot.users.fetch_add(1, Ordering::SeqCst);
        Busy(slot)
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        *self.0.used.lock().unwrap_or_else(|p| p.into_inner()) = Some(Instant::now());
        self.0.users.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Whether to try a kept connection before handing it out: once per node
/// and run (its `Connect`), not for every command.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Probe {
    Yes,
    No,
}

/// How long a kept connection has to answer ([`SshHost::answers`]): a
/// live one takes a round trip.
const PROBE_WAIT: Duration = Duration::from_secs(2);

/// Pass the run's stdin frames to the command and its output back, until
/// the command ends (then its status) or the run goes away (then the
/// command's stdin ends: a lock lets go).
async fn pump(mut p: Process, mut from_run: BufReader<OwnedReadHalf>, mut to_run: OwnedWriteHalf) {
    let mut stdin = p.stdin.take();
    let feed = async move {
        loop {
            match wire::read_frame(&mut from_run).await {
                Ok(Some((wire::STDIN, bytes))) => {
                    if let Some(tx) = &stdin {
                        if tx.send(Bytes::from(bytes)).await.is_err() {
                            stdin = None;
                        }
                    }
                }
                Ok(Some((wire::STDIN_END, _))) => stdin = None,
                // the run is gone, or said something it must not
                _ => return,
            }
        }
    };
    let answer = async move {
        let (mut out_open, mut err_open) = (true, true);
        while out_open || err_open {
            let (kind, chunk) = tokio::select! {
                c = p.stdout.recv(), if out_open => (wire::STDOUT, c),
                c = p.stderr.recv(), if err_open => (wire::STDERR, c),
            };
            match chunk {
                Some(c) => {
                    for part in c.chunks(wire::MAX_FRAME) {
                        if wire::write_frame(&mut to_run, kind, part).await.is_err() {
                            return;
                        }
                    }
                }
                None if kind == wire::STDOUT => out_open = false,
                None => err_open = false,
            }
        }
        let status = p.status.await.unwrap_or(255);
        let _ = wire::write_frame(&mut to_run, wire::STATUS, &status.to_be_bytes()).await;
        let _ = to_run.shutdown().await;
    };
    tokio::select! {
        _ = feed => {},
        _ = answer => {},
    }
}
