//! How the deployer reaches nodes: per node, SSH settings from the command
//! line (`--ssh-key`, `--known-hosts`, `--accept-new-host-keys`,
//! `--jump-host`), else the closure (user, port, key, jump host, become),
//! else the user's ~/.ssh/config, else root on port 22; then connect in
//! parallel, reporting each node as it answers or not.

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use super::error::Error;
use super::events::{Event, Sink};
use crate::closure::Closures;
use crate::schema::Ssh;
use crate::transport::keeper::{self, KeptHost};
use crate::transport::{
    connect_all, connect_one, identity, Escalation, Host, HostKeyPolicy, JumpHost, NodeTarget, OpenSshConfig,
    SshOptions,
};

#[derive(Debug, Clone, Default)]
pub struct SshSettings {
    pub key: Option<PathBuf>,
    pub known_hosts: Option<PathBuf>,
    pub accept_new_host_keys: bool,
    pub connect_timeout: Option<Duration>,
    pub jump_host: Option<JumpHost>,
    /// `--ssh-config`: None reads ~/.ssh/config, `none` nothing.
    pub config_file: Option<PathBuf>,
    /// `--persist`: keep the connections this long for the next run.
    pub persist: Option<Duration>,
    /// The configuration, read once on first use.
    config: Arc<OnceLock<Result<OpenSshConfig, crate::transport::Error>>>,
}

fn expand(p: &str) -> PathBuf {
    match (p.strip_prefix("~/"), std::env::var_os("HOME")) {
        (Some(rest), Some(home)) => PathBuf::from(home).join(rest),
        _ => PathBuf::from(p),
    }
}

impl SshSettings {
    fn config(&self) -> Result<&OpenSshConfig, Error> {
        self.config
            .get_or_init(|| OpenSshConfig::load(self.config_file.as_deref()))
            .as_ref()
            .map_err(|e| Error::Ssh(e.clone()))
    }

    /// The targets for the named nodes of `closures`.
    pub fn targets_of(&self, closures: &Closures, names: &[String]) -> Result<Vec<NodeTarget>, Error> {
        names
            .iter()
            .map(|n| {
                let node = &closures.cluster.nodes[n];
                self.target(n, &node.address, &node.ssh)
            })
            .collect()
    }

    /// How to reach one node. Per setting, the command line wins, then
    /// the cluster, then ~/.ssh/config (looked up by the node's address,
    /// as `ssh ADDRESS` would), then kdeploy's default (root, port 22).
    pub fn target(&self, name: &str, address: &str, ssh: &Ssh) -> Result<NodeTarget, Error> {
        let config = self.config()?;
        let of_node = |source| Error::NodeSsh { node: name.to_string(), source };
        let entry = config.lookup(address);
        let user = ssh.user.clone().or(entry.user.clone()).unwrap_or_else(|| "root".to_string());
        let jump = match (&self.jump_host, &ssh.jump_host, &entry.proxy_jump) {
            (Some(j), _, _) => Some(j.clone()),
            (None, Some(j), _) => Some(j.parse().map_err(of_node)?),
            (None, None, Some(hop)) => Some(jump_from_config(config, hop, &user)),
            (None, None, None) => None,
        };
        let candidates = identity::Candidates {
            flag: self.key.as_deref(),
            cluster: ssh.key.as_deref().map(expand),
            config: &entry.identity_files,
        };
        let auth = identity::choose(&candidates);
        let file = self
            .known_hosts
            .clone()
            .or(entry.known_hosts.clone())
            .unwrap_or_else(|| HostKeyPolicy::default().file().to_path_buf());
        let host_keys =
            if self.accept_new_host_keys { HostKeyPolicy::AcceptNew(file) } else { HostKeyPolicy::Strict(file) };
        let escalate = Escalation::for_login(&user, ssh.escalation.as_str()).map_err(of_node)?;
        let port = ssh.port.or(entry.port).unwrap_or(22);
        let mut options = SshOptions { user, port, auth, host_keys, jump, escalate, ..Default::default() };
        if let Some(t) = self.connect_timeout {
            options.connect_timeout = t;
        }
        options.persist = self.persist.filter(|p| !p.is_zero());
        let address = entry.host_name.unwrap_or_else(|| address.to_string());
        Ok(NodeTarget { name: name.to_string(), address, options })
    }
}

/// A ProxyJump hop, `[user@]host[:port]`, completed as OpenSSH would: the
/// hop's own HostName, User and Port from the configuration, else the
/// node's login user and port 22.
fn jump_from_config(config: &OpenSshConfig, hop: &str, node_user: &str) -> JumpHost {
    let (user, rest) = match hop.split_once('@') {
        Some((u, r)) => (Some(u.to_string()), r),
        None => (None, hop),
    };
    let (host, port) = match rest.rsplit_once(':') {
        Some((h, p)) if p.parse::<u16>().is_ok() => (h, p.parse().ok()),
        _ => (rest, None),
    };
    let e = config.lookup(host);
    JumpHost {
        user: user.or(e.user).unwrap_or_else(|| node_user.to_string()),
        host: e.host_name.unwrap_or_else(|| host.to_string()),
        port: port.or(e.port).unwrap_or(22),
    }
}

type Made = Vec<Result<Box<dyn Host>, crate::transport::Error>>;

async fn connect_direct(targets: &[NodeTarget], parallel: usize) -> Made {
    let made = connect_all(targets, parallel).await;
    made.into_iter().map(|r| r.map(|h| Box::new(h) as Box<dyn Host>)).collect()
}

/// Each target through the keeper at `socket` (which makes or reuses the
/// connection); one it cannot take, directly.
async fn connect_kept(socket: &std::path::Path, targets: &[NodeTarget], parallel: usize) -> Made {
    use futures::StreamExt;
    futures::stream::iter(targets)
        .map(|t| async move {
            match KeptHost::connect(socket, t).await {
                Some(r) => r.map(|h| Box::new(h) as Box<dyn Host>),
                None => connect_one(t).await.map(|h| Box::new(h) as Box<dyn Host>),
            }
        })
        .buffered(parallel)
        .collect()
        .await
}

/// This binary's keeper, started when none listens.
async fn keeper_socket(persist: Duration) -> Result<PathBuf, String> {
    let socket = keeper::socket_path()?;
    keeper::ensure_running(&socket, persist).await?;
    Ok(socket)
}

/// Who holds a lock, shown to a concurrent run.
pub fn lock_owner(what: &str) -> String {
    let host = std::fs::read_to_string("/etc/hostname").unwrap_or_default();
    format!("kdeploy-{what}@{}:{}", host.trim(), std::process::id())
}

/// Connects to every target (at most `parallel` at once; 0 means
/// [`super::bounded::DEFAULT_PARALLEL`]), through the connection keeper
/// when the targets ask to be kept (`--persist`), reporting each node as
/// connected or unreachable. Returns the hosts that answered and the
/// names of the targets that did not.
pub async fn connect_reporting(
    targets: &[NodeTarget],
    parallel: usize,
    sink: &dyn Sink,
) -> (Vec<Box<dyn Host>>, Vec<String>) {
    let parallel = super::bounded::width(parallel);
    let made = match targets.iter().find_map(|t| t.options.persist) {
        Some(persist) => match keeper_socket(persist).await {
            Ok(socket) => connect_kept(&socket, targets, parallel).await,
            Err(why) => {
                let message = format!("connections not kept for the next run: {why}");
                sink.emit(Event::Warning { node: "deployer".to_string(), message });
                connect_direct(targets, parallel).await
            }
        },
        None => connect_direct(targets, parallel).await,
    };
    let mut hosts = Vec::new();
    let mut unreachable = Vec::new();
    for (t, r) in targets.iter().zip(made) {
        match r {
            Ok(h) => {
                sink.emit(Event::NodeConnected { node: t.name.clone() });
                hosts.push(h);
            }
            Err(e) => {
                unreachable.push(t.name.clone());
                sink.emit(Event::NodeUnreachable { node: t.name.clone(), reason: e.to_string() });
            }
        }
    }
    (hosts, unreachable)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::SshAuth;

    fn ssh(user: Option<&str>, jump: Option<&str>) -> Ssh {
        Ssh {
            escalation: crate::schema::Become::Sudo,
            jump_host: jump.map(str::to_string),
            key: None,
            port: None,
            user: user.map(str::to_string),
        }
    }

    /// Settings reading `config` as the user's ~/.ssh/config.
    fn settings(dir: &std::path::Path, config: &str) -> SshSettings {
        let f = dir.join("config");
        std::fs::write(&f, config).unwrap();
        SshSettings { config_file: Some(f), ..Default::default() }
    }

    #[test]
    fn config_fills_what_the_cluster_leaves_open() {
        let d = tempfile::tempdir().unwrap();
        let key = d.path().join("id_lab");
        std::fs::write(&key, "not read for a test").unwrap();
        let config = format!(
            "Host bastion\n  HostName 192.0.2.1\n  User jump\n  Port 2200\n\n\
             Host 10.0.0.*\n  User ubuntu\n  Port 2222\n  IdentityFile {}\n  UserKnownHostsFile {}/kh\n  ProxyJump bastion\n",
            key.display(),
            d.path().display()
        );
        let s = settings(d.path(), &config);
        let t = s.target("n1", "10.0.0.5", &ssh(None, None)).unwrap();
        assert_eq!((t.address.as_str(), t.options.user.as_str(), t.options.port), ("10.0.0.5", "ubuntu", 2222));
        assert!(matches!(&t.options.auth, SshAuth::KeyFile { path, .. } if *path == key));
        assert_eq!(t.options.host_keys.file(), d.path().join("kh"));
        let j = t.options.jump.unwrap();
        assert_eq!((j.user.as_str(), j.host.as_str(), j.port), ("jump", "192.0.2.1", 2200));
        assert_eq!(t.options.escalate, Some(Escalation::Sudo), "a non-root login escalates");
    }

    #[test]
    fn cluster_then_flags_win_over_the_config() {
        let d = tempfile::tempdir().unwrap();
        let mut s = settings(d.path(), "Host *\n  User ubuntu\n  ProxyJump other@192.0.2.9:22\n");
        let t = s.target("n1", "10.0.0.5", &ssh(Some("root"), Some("ops@192.0.2.7:22"))).unwrap();
        assert_eq!(t.options.user, "root");
        assert_eq!(t.options.escalate, None, "root never escalates");
        assert_eq!(t.options.jump.unwrap().host, "192.0.2.7");
        s.jump_host = Some("cli@192.0.2.8:22".parse().unwrap());
        s.key = Some(d.path().join("flag_key"));
        let t = s.target("n1", "10.0.0.5", &ssh(Some("root"), Some("ops@192.0.2.7:22"))).unwrap();
        assert_eq!(t.options.jump.unwrap().host, "192.0.2.8");
        assert!(matches!(&t.options.auth, SshAuth::KeyFile { path, .. } if *path == d.path().join("flag_key")));
    }

    #[test]
    fn no_config_means_root_on_22() {
        let d = tempfile::tempdir().unwrap();
        let s = SshSettings { config_file: Some("none".into()), key: Some(d.path().join("k")), ..Default::default() };
        let t = s.target("n1", "10.0.0.5", &ssh(None, None)).unwrap();
        assert_eq!((t.options.user.as_str(), t.options.port, t.options.jump), ("root", 22, None));
    }
}
