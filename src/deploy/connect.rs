//! How the deployer reaches nodes: SSH settings from the closure (user,
//! port, key, jump host) overridden by the command line (`--ssh-key`,
//! `--known-hosts`, `--accept-new-host-keys`, `--jump-host`), then connect in parallel,
//! install the node program and take every node's lock.

use std::path::PathBuf;
use std::time::Duration;

use super::events::{Event, Sink};
use crate::transport::{connect_all, HostKeyPolicy, JumpHost, NodeTarget, SshAuth, SshHost, SshOptions};

#[derive(Debug, Clone, Default)]
pub struct SshSettings {
    pub key: Option<PathBuf>,
    pub known_hosts: Option<PathBuf>,
    pub accept_new_host_keys: bool,
    pub connect_timeout: Option<Duration>,
    pub jump_host: Option<JumpHost>,
}

fn expand(p: &str) -> PathBuf {
    match (p.strip_prefix("~/"), std::env::var_os("HOME")) {
        (Some(rest), Some(home)) => PathBuf::from(home).join(rest),
        _ => PathBuf::from(p),
    }
}

impl SshSettings {
    /// A target for one node; `key` and `jump` are the closure's `ssh.key`
    /// and `ssh.jumpHost`.
    pub fn target(
        &self,
        name: &str,
        address: &str,
        user: &str,
        port: u16,
        key: Option<&str>,
        jump: Option<&str>,
    ) -> Result<NodeTarget, String> {
        let jump = match (&self.jump_host, jump) {
            (Some(j), _) => Some(j.clone()),
            (None, Some(j)) => Some(j.parse().map_err(|e| format!("node {name}: {e}"))?),
            (None, None) => None,
        };
        let auth = match (&self.key, key) {
            (Some(k), _) => SshAuth::KeyFile { path: k.clone(), passphrase: None },
            (None, Some(k)) => SshAuth::KeyFile { path: expand(k), passphrase: None },
            (None, None) => SshAuth::Agent,
        };
        let file = self.known_hosts.clone().unwrap_or_else(|| HostKeyPolicy::default().file().to_path_buf());
        let host_keys =
            if self.accept_new_host_keys { HostKeyPolicy::AcceptNew(file) } else { HostKeyPolicy::Strict(file) };
        let mut options = SshOptions { user: user.to_string(), port, auth, host_keys, jump, ..Default::default() };
        if let Some(t) = self.connect_timeout {
            options.connect_timeout = t;
        }
        Ok(NodeTarget { name: name.to_string(), address: address.to_string(), options })
    }
}

/// Who holds a lock, shown to a concurrent run.
pub fn lock_owner(what: &str) -> String {
    let host = std::fs::read_to_string("/etc/hostname").unwrap_or_default();
    format!("kdeploy-{what}@{}:{}", host.trim(), std::process::id())
}

/// Connects to every target (at most `parallel` at once; 0 means 32),
/// reporting each node as connected or unreachable. Returns the hosts that
/// answered and whether any did not.
pub async fn connect_reporting(targets: &[NodeTarget], parallel: usize, sink: &dyn Sink) -> (Vec<SshHost>, bool) {
    let parallel = if parallel == 0 { 32 } else { parallel };
    let mut hosts = Vec::new();
    let mut unreachable = false;
    for (t, r) in targets.iter().zip(connect_all(targets, parallel).await) {
        match r {
            Ok(h) => {
                sink.emit(Event::NodeConnected { node: t.name.clone() });
                hosts.push(h);
            }
            Err(e) => {
                unreachable = true;
                sink.emit(Event::NodeUnreachable { node: t.name.clone(), reason: e.to_string() });
            }
        }
    }
    (hosts, unreachable)
}
