//! Host key verification against an OpenSSH known_hosts file, decided
//! *before* the real connection: we look the node up ourselves, then tell the
//! SSH client to accept exactly that key (and to negotiate its algorithm).
//! That is what lets us tell "changed key" (refused, naming file and line)
//! from "unknown host" (refused by default; recorded under
//! [`HostKeyPolicy::AcceptNew`]) — the SSH library alone reports both as one
//! opaque failure.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use russh::keys::{Algorithm, HashAlg, PublicKey};

use super::Error;

/// How to treat the node's host key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HostKeyPolicy {
    /// The key must be in the file; unknown hosts and changed keys are refused.
    Strict(PathBuf),
    /// Like `Strict`, but an unknown host is accepted and its key appended to
    /// the file (trust on first use). A changed key is still refused.
    AcceptNew(PathBuf),
}

impl HostKeyPolicy {
    pub fn file(&self) -> &Path {
        match self {
            HostKeyPolicy::Strict(p) | HostKeyPolicy::AcceptNew(p) => p,
        }
    }
}

impl Default for HostKeyPolicy {
    /// Strict, against `~/.ssh/known_hosts`.
    fn default() -> Self {
        let home = std::env::var_os("HOME").map(PathBuf::from).unwrap_or_else(|| "/root".into());
        HostKeyPolicy::Strict(home.join(".ssh/known_hosts"))
    }
}

/// The key a node must present, and where it was recorded.
#[derive(Debug, Clone)]
pub struct ExpectedKey {
    pub key: PublicKey,
    /// Line in the known_hosts file (0 when just recorded).
    pub line: usize,
}

impl ExpectedKey {
    /// The key in the base64 form the SSH client wants.
    pub fn base64(&self) -> String {
        let openssh = self.key.to_openssh().unwrap_or_default();
        openssh.split(' ').nth(1).unwrap_or("").to_string()
    }

    /// Host key algorithms to offer so the server presents *this* key.
    pub fn algorithms(&self) -> Vec<Algorithm> {
        match self.key.algorithm() {
            Algorithm::Rsa { .. } => vec![
                Algorithm::Rsa { hash: Some(HashAlg::Sha512) },
                Algorithm::Rsa { hash: Some(HashAlg::Sha256) },
                Algorithm::Rsa { hash: None },
            ],
            other => vec![other],
        }
    }
}

/// Find the recorded key of `names` (tried in order: the address connected
/// to, then the node's name) at `port`. `Ok(None)`: not in the file.
pub fn lookup(label: &str, names: &[&str], port: u16, file: &Path) -> Result<Option<ExpectedKey>, Error> {
    if !file.exists() {
        return Ok(None);
    }
    for name in names {
        let found = russh::keys::known_hosts::known_host_keys_path(name, port, file).map_err(|e| {
            Error::KnownHosts { host: label.to_string(), file: file.to_path_buf(), reason: e.to_string() }
        })?;
        if let Some((line, key)) = found.into_iter().next() {
            return Ok(Some(ExpectedKey { key, line: real_line(file, line) }));
        }
    }
    Ok(None)
}

/// russh numbers known_hosts lines without counting `#` comment lines; turn
/// its number into the line an editor shows.
fn real_line(file: &Path, russh_line: usize) -> usize {
    let Ok(text) = std::fs::read_to_string(file) else {
        return russh_line;
    };
    let mut counted = 0;
    for (i, l) in text.lines().enumerate() {
        if !l.starts_with('#') {
            counted += 1;
            if counted == russh_line {
                return i + 1;
            }
        }
    }
    russh_line
}

/// Serialises appends to known_hosts files from parallel connects.
static LEARN: Mutex<()> = Mutex::new(());

/// Record `key` for `name`:`port` in `file` (trust on first use).
pub fn learn(label: &str, name: &str, port: u16, key: &PublicKey, file: &Path) -> Result<(), Error> {
    let _guard = LEARN.lock().unwrap_or_else(|p| p.into_inner());
    russh::keys::known_hosts::learn_known_hosts_path(name, port, key, file).map_err(|e| Error::KnownHosts {
        host: label.to_string(),
        file: file.to_path_buf(),
        reason: e.to_string(),
    })
}

/// Learn the key a server presents without authenticating (a key scan):
/// the handshake is aborted as soon as the key is seen.
pub async fn scan(label: &str, addr: (&str, u16), config: russh::client::Config) -> Result<PublicKey, Error> {
    let tcp = tokio::net::TcpStream::connect(addr)
        .await
        .map_err(|e| Error::Unreachable { host: label.to_string(), reason: e.to_string() })?;
    scan_stream(label, tcp, config).await
}

/// [`scan`] over an already open stream (a bastion's forwarding channel).
pub async fn scan_stream<S>(label: &str, stream: S, config: russh::client::Config) -> Result<PublicKey, Error>
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let seen = Arc::new(Mutex::new(None));
    let handler = Scanner { seen: seen.clone() };
    let result = russh::client::connect_stream(Arc::new(config), stream, handler).await;
    let key = seen.lock().unwrap_or_else(|p| p.into_inner()).take();
    key.ok_or_else(|| Error::Unreachable {
        host: label.to_string(),
        reason: match result {
            Err(e) => e.to_string(),
            Ok(_) => "the server showed no host key".to_string(),
        },
    })
}

struct Scanner {
    seen: Arc<Mutex<Option<PublicKey>>>,
}

impl russh::client::Handler for Scanner {
    type Error = russh::Error;

    async fn check_server_key(&mut self, key: &PublicKey) -> Result<bool, Self::Error> {
        *self.seen.lock().unwrap_or_else(|p| p.into_inner()) = Some(key.clone());
        Ok(false)
    }
}
