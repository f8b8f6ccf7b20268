//! [`NodeLock`]: the node's run lock, held by a long-lived `lock` command of
//! the node program (an `flock` on `/var/lib/kdeploy/lock` kept by a shell
//! that lives as long as its stdin is open). Releasing is closing that
//! stdin; if the deployer dies or the connection drops, sshd ends the
//! session and the kernel drops the flock — a dead holder never blocks.

use crate::transport::Process;

/// Held while alive; [`NodeLock::release`] (or drop) lets go.
pub struct NodeLock {
    host: String,
    process: Option<Process>,
}

impl NodeLock {
    pub(super) fn new(host: &str, process: Process) -> Self {
        NodeLock { host: host.to_string(), process: Some(process) }
    }

    pub fn host(&self) -> &str {
        &self.host
    }

    /// Release the lock and wait until the node has let go of it.
    pub async fn release(mut self) {
        if let Some(p) = self.process.take() {
            let _ = p.wait().await;
        }
    }
}

impl Drop for NodeLock {
    fn drop(&mut self) {
        // Dropping the process closes its stdin: the node shell exits soon.
        self.process.take();
    }
}
