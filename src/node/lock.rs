//! [`NodeLock`]: the node's run lock, held by a long-lived `lock` command of
//! the node program (an `flock` on `/var/lib/kdeploy/lock` kept by a shell
//! that lives as long as the deployer's heartbeat). The deployer writes one
//! byte every [`HEARTBEAT`]; the holder touches `lock.owner` on each and
//! lets go after 30 s of silence or at end of input. So a holder that is
//! gone — killed (the connection closes: at once) or cut off without a TCP
//! close (nothing reaches the node: within 30 s) — never blocks for long,
//! and a run that finds the lock taken watches `lock.owner` for up to 12 s:
//! a heartbeat seen means a live holder (refused, exit 75: it is never
//! broken); none means the holder is gone, and the run waits for its lock.

use std::time::Duration;

use tokio::task::JoinHandle;

use crate::transport::Process;

/// How often the deployer tells a node it still holds the lock (the node
/// program's `lock` waits 30 s, and a contender 12 s, for a beat).
pub const HEARTBEAT: Duration = Duration::from_secs(5);

/// Held while alive; [`NodeLock::release`] (or drop) lets go.
pub struct NodeLock {
    host: String,
    process: Option<Process>,
    heartbeat: Option<JoinHandle<()>>,
}

impl NodeLock {
    pub(super) fn new(host: &str, process: Process) -> Self {
        let heartbeat = process.stdin.clone().map(|tx| {
            tokio::spawn(async move {
                loop {
                    tokio::time::sleep(HEARTBEAT).await;
                    if tx.send(bytes::Bytes::from_static(b".")).await.is_err() {
                        break;
                    }
                }
            })
        });
        NodeLock { host: host.to_string(), process: Some(process), heartbeat }
    }

    pub fn host(&self) -> &str {
        &self.host
    }

    /// Release the lock and wait until the node has let go of it.
    pub async fn release(mut self) {
        self.stop_heartbeat();
        if let Some(p) = self.process.take() {
            let _ = p.wait().await;
        }
    }

    fn stop_heartbeat(&mut self) {
        if let Some(h) = self.heartbeat.take() {
            h.abort();
        }
    }
}

impl Drop for NodeLock {
    fn drop(&mut self) {
        // Without the heartbeat's sender and the process, stdin closes:
        // the node shell exits soon.
        self.stop_heartbeat();
        self.process.take();
    }
}
