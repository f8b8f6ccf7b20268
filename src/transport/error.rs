//! Transport errors. Every variant names the node (as the user wrote it), so
//! a per-node failure can be reported without more context.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{host}: cannot connect: {reason}")]
    Unreachable { host: String, reason: String },
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
}

impl Error {
    /// Build a [`Error::Channel`] from any displayable reason.
    pub fn channel(host: &str, reason: impl std::fmt::Display) -> Self {
        Error::Channel { host: host.to_string(), reason: reason.to_string() }
    }
}
