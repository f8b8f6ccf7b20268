//! [`SshHost`]: one SSH connection per node (async-ssh2-tokio over russh),
//! opened once and reused for every command of the run; each command is its
//! own session channel, so commands run concurrently on one connection. A
//! bulk upload (a node's binaries) opens a second connection the same way
//! and closes it after: russh keeps a session's packet buffer at the
//! largest size it ever reached, and that would stay with every node.
//! TCP_NODELAY is on (without it every round trip costs ~50 ms of Nagle +
//! delayed ACK instead of ~8 ms). Host keys: see `known_hosts.rs`. A node
//! behind a bastion is reached through a `direct-tcpip` channel of the
//! bastion's connection ([`SshHost::connect_via`]); its host key is checked
//! exactly like a direct node's.

use std::borrow::Cow;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use async_ssh2_tokio::{AuthMethod, Client, ServerCheckMethod};
use russh::ChannelMsg;
use tokio::sync::{mpsc, oneshot, Notify, Semaphore};

use super::escalate::Escalation;
use super::known_hosts::{self, HostKeyPolicy};
use super::own_connection::{exec_on, upload_on, Ahead};
use super::{BoxFut, Error, Host, Output, Process};

/// How to log in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SshAuth {
    /// A private key file (OpenSSH format), with its passphrase if any.
    KeyFile { path: PathBuf, passphrase: Option<String> },
    /// Every identity the ssh-agent at `$SSH_AUTH_SOCK` offers.
    Agent,
    /// No way to log in was found (why, as advice): the node is reported
    /// unreachable with it, like any failed login.
    Unavailable(Box<Error>),
}

/// Per-node connection settings.
#[derive(Debug, Clone)]
pub struct SshOptions {
    pub user: String,
    pub port: u16,
    pub auth: SshAuth,
    pub host_keys: HostKeyPolicy,
    /// Bounds TCP connect + key exchange + authentication.
    pub connect_timeout: Duration,
    /// Reach the node through this bastion (Kubespray's bastion host).
    pub jump: Option<JumpHost>,
    /// Run every command as root this way (a non-root `user`).
    pub escalate: Option<Escalation>,
    /// Keep the connection this long after the run, for the next one
    /// (`--persist`: through the connection keeper, `keeper/`).
    pub persist: Option<Duration>,
}

/// A bastion, written `user@host:port` (the cluster's `ssh.jumpHost`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct JumpHost {
    pub user: String,
    pub host: String,
    pub port: u16,
}

impl std::str::FromStr for JumpHost {
    type Err = Error;

    fn from_str(s: &str) -> Result<JumpHost, Error> {
        let bad = || Error::JumpHostSyntax { text: s.to_string() };
        let (user, rest) = s.split_once('@').ok_or_else(bad)?;
        let (host, port) = rest.rsplit_once(':').ok_or_else(bad)?;
        let port = port.parse().map_err(|_| bad())?;
        if user.is_empty() || host.is_empty() {
            return Err(bad());
        }
        Ok(JumpHost { user: user.to_string(), host: host.to_string(), port })
    }
}

impl std::fmt::Display for JumpHost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}@{}:{}", self.user, self.host, self.port)
    }
}

impl Default for SshOptions {
    fn default() -> Self {
        SshOptions {
            user: "root".to_string(),
            port: 22,
            auth: SshAuth::Agent,
            host_keys: HostKeyPolicy::default(),
            connect_timeout: Duration::from_secs(10),
            jump: None,
            escalate: None,
            persist: None,
        }
    }
}

/// An open SSH connection to one node.
pub struct SshHost {
    name: String,
    client: Client,
    /// The bastion's connection this one runs inside; kept open as long as
    /// this host is.
    _bastion: Option<Client>,
    /// One permit per open session channel. sshd refuses sessions beyond
    /// its `MaxSessions` (10 by default) on one connection; callers may
    /// start any number of commands at once, the extra ones wait here.
    sessions: Arc<Semaphore>,
    escalate: Option<Escalation>,
    /// How this connection was made, to open another like it for a bulk
    /// upload ([`Host::upload_bulk`]).
    route: Route,
    /// That connection, being made since [`Host::expect_bulk`].
    bulk: Ahead,
    /// The host key (base64) the node proved it holds when this
    /// connection was made: a connection kept between runs is used again
    /// only while known_hosts still names this key ([`SshHost::still_trusted`]).
    host_key: String,
}

#[derive(Clone)]
struct Route {
    address: String,
    opts: SshOptions,
    via: Option<Client>,
}

impl Route {
    /// Another connection to the node called `name`, the same way.
    async fn connect(&self, name: &str) -> Result<SshHost, Error> {
        let inner = SshHost::connect_inner(name, &self.address, &self.opts, self.via.as_ref());
        let h = SshHost::with_timeout(name, &self.opts, inner).await?;
        Ok(SshHost { _bastion: self.via.clone(), ..h })
    }
}

/// Below OpenSSH's default `MaxSessions` of 10, with room to spare for a
/// server configured a little tighter.
const MAX_SESSIONS: usize = 8;

/// AES-GCM first: with AES-NI it moves bulk data faster than ChaCha20
/// (russh's first choice); both are AEAD and in OpenSSH's defaults.
const CIPHERS: &[russh::cipher::Name] = &[
    russh::cipher::AES_256_GCM,
    russh::cipher::AES_128_GCM,
    russh::cipher::CHACHA20_POLY1305,
    russh::cipher::AES_256_CTR,
    russh::cipher::AES_128_CTR,
];

fn client_config() -> russh::client::Config {
    let mut c = russh::client::Config {
        nodelay: true,
        keepalive_interval: Some(Duration::from_secs(15)),
        keepalive_max: 4,
        ..Default::default()
    };
    c.preferred.cipher = Cow::Borrowed(CIPHERS);
    c
}

impl SshHost {
    /// Connect to `address` (what TCP connects to; also the first name looked
    /// up in known_hosts, then `name`) and authenticate. `name` is the node's
    /// name in every message.
    pub async fn connect(name: &str, address: &str, opts: &SshOptions) -> Result<SshHost, Error> {
        Self::with_timeout(name, opts, Self::connect_inner(name, address, opts, None)).await
    }

    /// Like [`SshHost::connect`], but through the open connection `via` (a
    /// bastion): TCP to `address` starts on the bastion.
    pub async fn connect_via(name: &str, address: &str, opts: &SshOptions, via: &SshHost) -> Result<SshHost, Error> {
        let r = Self::with_timeout(name, opts, Self::connect_inner(name, address, opts, Some(&via.client))).await;
        r.map(|h| SshHost { _bastion: Some(via.client.clone()), ..h })
    }

    /// Whether this connection may serve another run: it is open, and the
    /// known_hosts file still expects the key the node proved it holds
    /// (a key removed, changed or revoked since is checked again by a new
    /// connection, with the error that names it).
    pub fn still_trusted(&self) -> bool {
        if self.client.is_closed() {
            return false;
        }
        let (address, port) = (self.route.address.as_str(), self.route.opts.port);
        let file = self.route.opts.host_keys.file();
        matches!(known_hosts::lookup(&self.name, &[address, &self.name], port, file),
                 Ok(Some(k)) if k.base64() == self.host_key)
    }

    /// Whether the node still answers on this connection within `wait`:
    /// it opens a session channel and closes it again (one round trip,
    /// answered by sshd itself: no login session, no process on the node).
    pub async fn answers(&self, wait: Duration) -> bool {
        match tokio::time::timeout(wait, self.client.get_channel()).await {
            Ok(Ok(channel)) => {
                let _ = channel.close().await;
                true
            }
            _ => false,
        }
    }

    /// Another connection to the same node, the same way.
    async fn reconnect(&self) -> Result<SshHost, Error> {
        self.route.connect(&self.name).await
    }

    async fn with_timeout(
        name: &str,
        opts: &SshOptions,
        f: impl std::future::Future<Output = Result<SshHost, Error>>,
    ) -> Result<SshHost, Error> {
        let secs = opts.connect_timeout.as_secs().max(1);
        match tokio::time::timeout(opts.connect_timeout, f).await {
            Ok(r) => r,
            Err(_) => Err(Error::ConnectTimeout { host: name.to_string(), secs }),
        }
    }

    async fn connect_inner(
        name: &str,
        address: &str,
        opts: &SshOptions,
        via: Option<&Client>,
    ) -> Result<SshHost, Error> {
        let file = opts.host_keys.file();
        let expected = match known_hosts::lookup(name, &[address, name], opts.port, file)? {
            Some(k) => k,
            None => match &opts.host_keys {
                HostKeyPolicy::Strict(_) => {
                    return Err(Error::HostKeyUnknown { host: name.to_string(), file: file.to_path_buf() })
                }
                HostKeyPolicy::AcceptNew(_) => {
                    let key = match via {
                        None => known_hosts::scan(name, (address, opts.port), client_config()).await?,
                        Some(v) => {
                            let ch = v
                                .open_direct_tcpip_channel((address, opts.port), None)
                                .await
                                .map_err(|e| classify(name, &opts.user, file, 0, e))?;
                            known_hosts::scan_stream(name, ch.into_stream(), client_config()).await?
                        }
                    };
                    known_hosts::refuse_revoked(name, &key, file)?;
                    known_hosts::learn(name, address, opts.port, &key, file)?;
                    known_hosts::ExpectedKey { key, line: 0 }
                }
            },
        };
        let mut config = client_config();
        config.preferred.key = Cow::Owned(expected.algorithms());
        let auth = match &opts.auth {
            SshAuth::KeyFile { path, passphrase } => AuthMethod::with_key_file(path, passphrase.as_deref()),
            SshAuth::Agent => AuthMethod::with_agent(),
            SshAuth::Unavailable(why) => {
                return Err(Error::Auth { host: name.to_string(), user: opts.user.clone(), reason: why.to_string() })
            }
        };
        let check = ServerCheckMethod::PublicKey(expected.base64());
        let addr = (address, opts.port);
        let client = match via {
            None => Client::connect_with_config(addr, &opts.user, auth, check, config).await,
            Some(v) => Client::connect_via_with_config(v, addr, &opts.user, auth, check, config).await,
        }
        .map_err(|e| classify(name, &opts.user, file, expected.line, e))?;
        let host = SshHost {
            name: name.to_string(),
            client,
            _bastion: None,
            sessions: Arc::new(Semaphore::new(MAX_SESSIONS)),
            escalate: opts.escalate,
            route: Route { address: address.to_string(), opts: opts.clone(), via: via.cloned() },
            bulk: Default::default(),
            host_key: expected.base64(),
        };
        host.check_escalation(&opts.user).await?;
        Ok(host)
    }

    /// A kept connection handed to a new run: a non-root login's escalation
    /// proved again (the node's sudoers may have changed since it was
    /// made), so a refusal stays an error at connect time.
    pub async fn prove_escalation_again(&self) -> Result<(), Error> {
        self.check_escalation(&self.route.opts.user).await
    }

    /// With a non-root login, prove once that escalation works without a
    /// password, so a refusal is an authentication error at connect time
    /// rather than the first step failing on every node.
    async fn check_escalation(&self, user: &str) -> Result<(), Error> {
        let Some(e) = self.escalate else { return Ok(()) };
        let out = self.exec("id -u", None).await?;
        if out.success() && out.stdout_str().trim() == "0" {
            return Ok(());
        }
        let stderr = String::from_utf8_lossy(&out.stderr);
        Err(Error::Auth {
            host: self.name.clone(),
            user: user.to_string(),
            reason: e.refusal(user, &out.stdout_str(), &stderr),
        })
    }
}

/// Turn the library's error into ours: tell a changed host key, a failed
/// login and an unreachable node apart.
fn classify(name: &str, user: &str, file: &std::path::Path, line: usize, e: async_ssh2_tokio::Error) -> Error {
    use async_ssh2_tokio::Error as E;
    let host = name.to_string();
    let changed = || Error::HostKeyChanged { host: name.to_string(), file: file.to_path_buf(), line };
    match e {
        E::ServerCheckFailed | E::SshError(russh::Error::UnknownKey) => changed(),
        // The server has no key of the recorded type any more: also a change.
        E::SshError(russh::Error::NoCommonAlgo { kind: russh::AlgorithmKind::Key, .. }) => changed(),
        E::KeyAuthFailed
        | E::KeyInvalid(_)
        | E::PasswordWrong
        | E::AgentAuthError(_)
        | E::AgentConnectionFailed
        | E::AgentRequestIdentitiesFailed
        | E::AgentNoIdentities
        | E::AgentAuthenticationFailed => Error::Auth { host, user: user.to_string(), reason: e.to_string() },
        other => Error::Unreachable { host, reason: other.to_string() },
    }
}

/// How often, and how far apart, a refused session is asked for again.
const OPEN_RETRIES: u32 = 8;
const OPEN_BACKOFF: Duration = Duration::from_millis(25);

impl SshHost {
    /// Open a session channel. sshd frees a session's slot only when both
    /// sides have closed it, so a burst of commands can briefly meet its
    /// `MaxSessions` although our own count is below it; such a refusal is
    /// retried with a growing pause (25 ms .. 3.2 s, ~6 s in all).
    async fn open_session(&self) -> Result<russh::Channel<russh::client::Msg>, Error> {
        let mut pause = OPEN_BACKOFF;
        for _ in 0..OPEN_RETRIES {
            match self.client.get_channel().await {
                Err(async_ssh2_tokio::Error::SshError(russh::Error::ChannelOpenFailure(_))) => {
                    tokio::time::sleep(pause).await;
                    pause *= 2;
                }
                other => return other.map_err(|e| Error::channel(&self.name, e)),
            }
        }
        self.client.get_channel().await.map_err(|e| Error::channel(&self.name, e))
    }
}

impl Host for SshHost {
    fn name(&self) -> &str {
        &self.name
    }

    fn spawn<'a>(&'a self, command: &'a str) -> BoxFut<'a, Result<Process, Error>> {
        Box::pin(async move {
            let permit = self.sessions.clone().acquire_owned().await.expect("the semaphore is never closed");
            let channel = self.open_session().await?;
            let command = match self.escalate {
                Some(e) => Cow::Owned(e.wrap(command)),
                None => Cow::Borrowed(command),
            };
            channel.exec(true, command.as_ref()).await.map_err(|e| Error::channel(&self.name, e))?;
            let (mut read, write) = channel.split();
            // two chunks in flight per upload: enough to keep the channel busy,
            // little enough that many nodes pushing at once stay small
            let (in_tx, mut in_rx) = mpsc::channel::<bytes::Bytes>(2);
            let (out_tx, out_rx) = mpsc::unbounded_channel();
            let (err_tx, err_rx) = mpsc::unbounded_channel();
            let (st_tx, st_rx) = oneshot::channel();
            // The command has exited: nothing will read its stdin again, and a
            // write waiting for window space would wait for ever.
            let exited = Arc::new(Notify::new());
            let exited_w = exited.clone();
            // stdin: forward until the sender is dropped, then EOF. A write
            // error or the command's exit means it is gone; its status will
            // say why (dropping `in_rx` tells the uploader to stop).
            tokio::spawn(async move {
                while let Some(buf) = in_rx.recv().await {
                    tokio::select! {
                        // whole packets straight from the chunk (`data` would copy
                        // it through an 8 KiB buffer into 8 KiB packets)
                        r = write.data_bytes(buf) => if r.is_err() { return },
                        _ = exited_w.notified() => return,
                    }
                }
                let _ = write.eof().await;
            });
            tokio::spawn(async move {
                let mut status = None;
                while let Some(msg) = read.wait().await {
                    if matches!(msg, ChannelMsg::ExitStatus { .. } | ChannelMsg::ExitSignal { .. }) {
                        exited.notify_one();
                    }
                    match msg {
                        ChannelMsg::Data { data } => {
                            let _ = out_tx.send(data.to_vec());
                        }
                        ChannelMsg::ExtendedData { data, ext: 1 } => {
                            let _ = err_tx.send(data.to_vec());
                        }
                        ChannelMsg::ExitStatus { exit_status } => status = Some(exit_status),
                        ChannelMsg::ExitSignal { signal_name, .. } => {
                            let _ = err_tx.send(format!("killed by signal {signal_name:?}\n").into_bytes());
                        }
                        _ => {}
                    }
                }
                exited.notify_one();
                drop(out_tx);
                drop(err_tx);
                drop(permit);
                let _ = st_tx.send(status.unwrap_or(255));
            });
            Ok(Process::new(in_tx, out_rx, err_rx, st_rx))
        })
    }

    fn close(&self) -> BoxFut<'_, Result<(), Error>> {
        Box::pin(async move {
            // a bulk connection made but never used goes with this one
            self.bulk.abort();
            self.client.disconnect().await.map_err(|e| Error::channel(&self.name, e))
        })
    }

    fn exec_fresh<'a>(&'a self, command: &'a str) -> BoxFut<'a, Result<Output, Error>> {
        Box::pin(async move { exec_on(self.reconnect().await, command).await })
    }

    /// On a connection of its own, closed after; on this one if another
    /// cannot be opened (the upload matters, not where it runs).
    fn upload_bulk<'a>(
        &'a self,
        command: &'a str,
        source: &'a mut (dyn std::io::Read + Send),
    ) -> BoxFut<'a, Result<Output, Error>> {
        Box::pin(async move {
            let own = self.bulk.take(&self.name, self.reconnect()).await;
            upload_on(own, self, command, source).await
        })
    }

    fn expect_bulk(&self) {
        let (name, route) = (self.name.clone(), self.route.clone());
        self.bulk.start(async move { route.connect(&name).await });
    }
}
