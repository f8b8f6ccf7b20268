//! Transport errors: reaching a node, and working out how to reach it.
//! Every variant of a connection names the node (as the user wrote it), so
//! a per-node failure can be reported without more context; the settings
//! variants (an SSH config, a jump host, `ssh.become`, a login key) name
//! the file or value at fault, and the deployer adds the node.
//! Foreign errors (I/O, the SSH library) are kept as their text, so an
//! error can be shared by every node behind one bastion.

use std::path::PathBuf;

use super::identity::DEFAULT_IDENTITIES;

/// (Serializable: the connection keeper hands a refusal to the run that
/// asked, as the typed value it is.)
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, serde::Serialize, serde::Deserialize)]
pub enum Error {
    #[error("{host}: cannot connect: {reason}")]
    Unreachable { host: String, reason: String },
    /// The node's bastion could not be reached.
    #[error("{host}: cannot connect: through {via}")]
    Through { host: String, via: Box<Error> },
    #[error("{host}: connection timed out after {secs} s")]
    ConnectTimeout { host: String, secs: u64 },
    #[error(
        "{host}: HOST KEY CHANGED: the key it presents does not match {file}:{line} — \
         refusing to connect (possible man-in-the-middle; if the node was really \
         reinstalled, remove that line)"
    )]
    HostKeyChanged { host: String, file: PathBuf, line: usize },
    #[error(
        "{host}: unknown host: no key for it in {file} — refusing to connect \
         (add it with ssh-keyscan, or allow recording new hosts explicitly)"
    )]
    HostKeyUnknown { host: String, file: PathBuf },
    #[error(
        "{host}: HOST KEY REVOKED: its key is marked @revoked at {file}:{line} — refusing to connect \
         (a revoked key is never accepted, whatever other lines say)"
    )]
    HostKeyRevoked { host: String, file: PathBuf, line: usize },
    #[error("{host}: cannot read known_hosts file {file}: {reason}")]
    KnownHosts { host: String, file: PathBuf, reason: String },
    #[error("{host}: authentication as {user} failed: {reason}")]
    Auth { host: String, user: String, reason: String },
    #[error("{host}: {reason}")]
    Channel { host: String, reason: String },
    #[error("{host}: `{command}` exited with status {status}: {stderr}")]
    Failed { host: String, command: String, status: u32, stderr: String },

    // How to reach a node: the settings, before any connection.
    #[error("cannot read SSH config {}: {reason}", .file.display())]
    SshConfigRead { file: PathBuf, reason: String },
    #[error("SSH config {}: {reason}", .file.display())]
    SshConfigSyntax { file: PathBuf, reason: String },
    #[error("jump host {text:?}: expected user@host:port")]
    JumpHostSyntax { text: String },
    #[error("ssh.become {method:?}: expected \"sudo\", \"doas\" or \"none\"")]
    Become { method: String },
    #[error(
        "no SSH identity: no ssh-agent (SSH_AUTH_SOCK is unset) and none of {} exists; \
         set ssh.key in the cluster, IdentityFile in ~/.ssh/config, or pass --ssh-key",
        DEFAULT_IDENTITIES.iter().map(|d| format!("~/{d}")).collect::<Vec<_>>().join(", ")
    )]
    NoIdentity,
    #[error(
        "key {k} is encrypted and there is no terminal to ask for its passphrase: \
         add it to ssh-agent (ssh-add {k}) or run kdeploy on a terminal",
        k = .key.display()
    )]
    PassphraseNoTerminal { key: PathBuf },
    #[error("reading the passphrase of {}: {reason}", .key.display())]
    PassphraseRead { key: PathBuf, reason: String },
    #[error("key {}: wrong passphrase {tries} times", .key.display())]
    PassphraseWrong { key: PathBuf, tries: usize },
}

impl Error {
    /// Build a [`Error::Channel`] from any displayable reason.
    pub fn channel(host: &str, reason: impl std::fmt::Display) -> Self {
        Error::Channel { host: host.to_string(), reason: reason.to_string() }
    }
}
