//! [`NodeLock`]: the node's run lock, held by a long-lived `lock` command of
//! the node program (an `flock` on `/var/lib/kdeploy/lock` kept by a shell
//! that lives as long as the deployer's heartbeat). The deployer writes one
//! byte every [`HEARTBEAT`]; the holder touches `lock.owner` on each and
//! lets go after [`SILENCE`] without one or at end of input. So a holder that is
//! gone — killed (the connection closes: at once) or cut off without a TCP
//! close (nothing reaches the node: within 30 s) — never blocks for long,
//! and a run that finds the lock taken watches `lock.owner` for up to 12 s
//! (these timings are defined once, in `protocol/constants.rs`):
//! a heartbeat seen means a live holder (refused, exit 75: it is never
//! broken); none means the holder is gone, and the run waits for its lock.
//!
//! The other side of that: a deployer that is paused for 30 s or more
//! (Ctrl-Z, a laptop asleep, a stalled network) has lost its lock, and
//! another run may hold it when it resumes. Two things keep it from going
//! on as if nothing happened. The lock carries a token (a random id,
//! [`new_token`], given to `lock`): the node program refuses every command
//! that changes the node unless it brings the token of the lock's live
//! holder (exit 77, [`super::NodeError::LockLost`]). And the guard watches
//! its own lock ([`NodeLock::is_lost`]): the `lock` command ended without
//! being released, or no heartbeat could be sent for [`PRESUMED_LOST`], so the
//! executor stops before its next change without a command being refused.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::transport::Process;

use super::protocol::constants::{HEARTBEAT, SILENCE};

/// How long without a beat sent before the deployer takes its lock for
/// lost. Shorter than [`SILENCE`] by two beats: a beat counts as sent when
/// it is queued, and the node counts from the last byte it received, which
/// may be the one before (the deployer paused before its queue was written
/// out). Presuming a held lock lost only stops a run that was paused for
/// 20 s; presuming a lost lock held lets it change a node another run owns
/// (the node program would refuse, but by then the run has started).
pub const PRESUMED_LOST: Duration = Duration::from_secs(SILENCE.as_secs() - 2 * HEARTBEAT.as_secs());

/// A random id for one lock (32 hex digits), told to the node program
/// when the lock is taken. Not a secret: it tells this run's lock from
/// the next one's. Should the system's random source fail, the time, the
/// process and a counter still make it unique to this lock.
pub fn new_token() -> String {
    let mut bytes = [0u8; 16];
    if getrandom::getrandom(&mut bytes).is_err() {
        static COUNT: AtomicU64 = AtomicU64::new(0);
        let mut h = blake3::Hasher::new();
        h.update(&format!("{:?}", std::time::SystemTime::now()).into_bytes());
        h.update(&std::process::id().to_le_bytes());
        h.update(&COUNT.fetch_add(1, Ordering::Relaxed).to_le_bytes());
        bytes.copy_from_slice(&h.finalize().as_bytes()[..16]);
    }
    hex::encode(bytes)
}

/// What the guard, its heartbeat and its watcher share.
struct State {
    since: Instant,
    /// Milliseconds after `since` of the last beat sent.
    beat: AtomicU64,
    /// Shared with the [`super::Node`] that took the lock, which sets it
    /// when the node refuses one of its commands for want of the lock.
    lost: Arc<AtomicBool>,
    released: AtomicBool,
}

impl State {
    fn new(since: Instant, lost: Arc<AtomicBool>) -> State {
        State { since, beat: AtomicU64::new(0), lost, released: AtomicBool::new(false) }
    }

    fn beat(&self) {
        self.beat.store(self.since.elapsed().as_millis() as u64, Ordering::SeqCst);
    }

    fn is_lost(&self) -> bool {
        if self.lost.load(Ordering::SeqCst) {
            return true;
        }
        if self.released.load(Ordering::SeqCst) {
            return false;
        }
        let silent = self.since.elapsed().saturating_sub(Duration::from_millis(self.beat.load(Ordering::SeqCst)));
        if silent >= PRESUMED_LOST {
            // the node's holder may have given up by now: latched, a beat
            // sent later does not take it back
            self.lost.store(true, Ordering::SeqCst);
        }
        self.lost.load(Ordering::SeqCst)
    }
}

/// Held while alive; [`NodeLock::release`] (or drop) lets go.
pub struct NodeLock {
    host: String,
    state: Arc<State>,
    /// (behind a mutex: [`NodeLock::let_go`] closes it through `&self`)
    stdin: std::sync::Mutex<Option<mpsc::Sender<Bytes>>>,
    heartbeat: Option<JoinHandle<()>>,
    /// Owns the `lock` command until it ends: an end we did not ask for
    /// means the lock is gone.
    watcher: Option<JoinHandle<()>>,
}

impl NodeLock {
    /// The guard of a started `lock` command that has printed `locked`;
    /// `lost` is the taking [`super::Node`]'s.
    pub(super) fn new(host: &str, mut process: Process, lost: Arc<AtomicBool>) -> Self {
        let state = Arc::new(State::new(Instant::now(), lost));
        let stdin = process.stdin.take();
        let heartbeat = stdin.clone().map(|tx| {
            let state = state.clone();
            tokio::spawn(async move {
                loop {
                    tokio::time::sleep(HEARTBEAT).await;
                    if state.is_lost() || tx.send(Bytes::from_static(b".")).await.is_err() || state.is_lost() {
                        break;
                    }
                    state.beat();
                }
            })
        });
        let watched = state.clone();
        let watcher = tokio::spawn(async move {
            let _ = process.wait().await;
            if !watched.released.load(Ordering::SeqCst) {
                watched.lost.store(true, Ordering::SeqCst);
            }
        });
        NodeLock {
            host: host.to_string(),
            state,
            stdin: std::sync::Mutex::new(stdin),
            heartbeat,
            watcher: Some(watcher),
        }
    }

    pub fn host(&self) -> &str {
        &self.host
    }

    /// The lock is not this run's any more, as far as the deployer can
    /// tell: the node's `lock` command ended though the run did not let
    /// go, or no heartbeat went out for [`PRESUMED_LOST`]. (The node program's
    /// token check answers for certain, command by command.)
    pub fn is_lost(&self) -> bool {
        self.state.is_lost()
    }

    /// Release the lock and wait until the node has let go of it.
    pub async fn release(mut self) {
        self.let_go();
        if let Some(w) = self.watcher.take() {
            let _ = w.await;
        }
    }

    /// Let go of the lock without waiting, while the run goes on: a node
    /// cut off from the run is left to its self-rollback, which waits for
    /// the lock. The node lets go when the end of input or the silence
    /// reaches it.
    pub fn let_go(&self) {
        self.state.released.store(true, Ordering::SeqCst);
        if let Some(h) = &self.heartbeat {
            h.abort();
        }
        self.stdin.lock().unwrap_or_else(|p| p.into_inner()).take();
    }
}

impl Drop for NodeLock {
    fn drop(&mut self) {
        // Without the heartbeat's sender and the process, stdin closes:
        // the node shell exits soon.
        self.let_go();
        if let Some(w) = self.watcher.take() {
            w.abort();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_hex_and_differ() {
        let (a, b) = (new_token(), new_token());
        assert_eq!(a.len(), 32);
        assert!(a.bytes().all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()));
        assert_ne!(a, b);
    }

    #[test]
    fn silence_past_the_node_s_patience_is_a_lost_lock_for_good() {
        let Some(long_ago) = Instant::now().checked_sub(PRESUMED_LOST + Duration::from_secs(1)) else { return };
        let state = State::new(long_ago, Arc::default());
        assert!(state.is_lost());
        state.beat();
        assert!(state.is_lost(), "a beat after the silence does not bring the lock back");
        let fresh = State::new(Instant::now(), Arc::default());
        assert!(!fresh.is_lost());
        let released = State::new(long_ago, Arc::default());
        released.released.store(true, Ordering::SeqCst);
        assert!(!released.is_lost(), "a lock let go of is not lost");
    }
}
