//! The store's errors: one enum, a variant per kind of failure (a file of
//! the deployer's that cannot be read or written, a source read from where
//! it may not be, key material in a plain source, an artifact that cannot
//! be had, the secret store, a certificate, the binary cache, a proxy),
//! each with what its message names. Foreign errors (I/O, HTTP, rcgen) are
//! kept as their text: an error is shared by every node that needed the
//! same blob, so it is cloned, and a URL's credentials are scrubbed from
//! that text before it is kept.

use std::fmt;
use std::path::PathBuf;

use super::key_material::USE_SECRET_FILE;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// A file of the deployer's: the store, its compressed forms, a source.
    #[error("{what} {}: {reason}", .path.display())]
    Io { what: &'static str, path: PathBuf, reason: String },
    /// A file read for a blob holds other bytes (changed since the
    /// evaluation named it).
    #[error("{}: its bytes are not blob {blob} (the file changed after the evaluation read it); run again", .path.display())]
    NotTheBlob { path: PathBuf, blob: String },

    // Where a source may be read from (`project.rs`, `confine.rs`).
    #[error("project root {}: {reason}", .root.display())]
    ProjectRoot { root: PathBuf, reason: String },
    #[error("project file {rel:?}{fault}")]
    ProjectFile { rel: String, fault: FileFault },
    #[error("deployer file {path:?}: must be an absolute path")]
    DeployerNotAbsolute { path: String },
    #[error("deployer file {path}{fault}")]
    DeployerFile { path: String, fault: FileFault },
    /// `what`: the file, as the other messages name it.
    #[error(
        "{what}: lies in kdeploy's private state ({dir}): its secrets leave the deployer only as the secrets \
         kdeploy sends, never as a file a cluster names"
    )]
    Private { what: String, dir: String },

    // What a source holds, and where its bytes go.
    /// `what`: the source, as the other messages name it.
    #[error("{what} {why}: {USE_SECRET_FILE}")]
    KeyMaterial { what: String, why: &'static str },
    #[error("not a plain file source: {kind}")]
    NotPlainFile { kind: &'static str },
    #[error("{shown}: {reason}")]
    SourceRead { shown: String, reason: String },
    #[error("secret file {path}: {reason}")]
    SecretFile { path: String, reason: String },
    /// `command`: the command line as the cluster gives it (never its output).
    #[error("secret command `{command}`: {reason}")]
    SecretCommand { command: String, reason: String },
    #[error(
        "secret command `{command}`: a cluster file's command runs on this machine only when you allow it: \
         --allow-secret-commands (or KDEPLOY_ALLOW_SECRET_COMMANDS=1)"
    )]
    SecretCommandNotAllowed { command: String },
    #[error("{shown}: a secret never enters the blob store")]
    SecretNotStored { shown: String },

    // Artifacts (`artifact.rs`, `http.rs`).
    #[error("artifact {name}{fault}")]
    Artifact { name: String, fault: ArtifactFault },
    /// Every artifact of a run that could not be had, one a line.
    #[error("{}", lines(.0))]
    Artifacts(Vec<Error>),
    /// A download that failed (its text scrubbed of the URL's credentials).
    #[error("{reason}{}", .attempts.map_or(String::new(), |n| format!(" (after {n} attempts)")))]
    Download { reason: String, attempts: Option<u32> },
    #[error("proxy {url}: {reason}")]
    Proxy { url: String, reason: String },

    // The secret store (`secrets.rs`, `pki.rs`).
    #[error("secret store: {what} {}: {reason}", .path.display())]
    SecretIo { what: &'static str, path: PathBuf, reason: String },
    #[error("secret store: secret {name:?}: {why}")]
    BadSecret { name: String, why: String },
    #[error("secret store: secret name {name:?} {why}")]
    BadSecretName { name: String, why: &'static str },
    /// A user's own file (an absolute name) where one may not be.
    #[error("secret store: {name:?} {why}")]
    BadSecretPath { name: String, why: &'static str },
    #[error("secret store: {name} is a file of the user's, never written by kdeploy")]
    UserFile { name: String },
    #[error("secret store: CA {cert} and its key {key} must both exist (or, for a CA kdeploy makes, both be absent)")]
    CaHalf { cert: String, key: String },
    #[error("{what} {name}: not PEM text")]
    NotPem { what: &'static str, name: String },
    #[error("no randomness from the OS: {reason}")]
    NoRandomness { reason: String },
    /// A certificate or key that cannot be made or read.
    #[error("{what}: {reason}")]
    Pki { what: String, reason: String },
    /// `pkcs8`: the key is PKCS#8, the one form read (else how to convert it).
    #[error("CA key {name}: {reason}{}", pkcs8_hint(.name, *.pkcs8))]
    CaKey { name: String, reason: String, pkcs8: bool },

    // The binary cache (`cache.rs`).
    #[error("transfer.cache {url}: not an http:// or https:// URL")]
    CacheUrl { url: String },
    #[error(
        "transfer.cache {url}: credentials in the URL would sit in every node's process list; \
         restrict the cache by address instead (nodes and the deployer reach it directly)"
    )]
    CacheCredentials { url: String },
    #[error("{op} the cache {url}: {reason}")]
    Cache { op: CacheOp, url: String, reason: String },
    #[error("{op} the cache {url}: the server answered {status}{}", .op.status_hint())]
    CacheStatus { op: CacheOp, url: String, status: u16 },
}

fn lines(errors: &[Error]) -> String {
    errors.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n")
}

fn pkcs8_hint(name: &str, pkcs8: bool) -> String {
    // ring reads PKCS#8 only; `openssl ecparam -genkey` and old `genrsa` write SEC1/PKCS#1.
    if pkcs8 {
        return String::new();
    }
    format!(
        " (kdeploy reads unencrypted PKCS#8 keys, \"-----BEGIN PRIVATE KEY-----\"; convert with \
         `openssl pkcs8 -topk8 -nocrypt -in {name} -out {name}.new && mv {name}.new {name}`)"
    )
}

/// What is wrong with a file a source names; shown after the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileFault {
    NotRelative {
        root: PathBuf,
    },
    /// A `..` in the path, refused even when it would land inside again.
    Escapes {
        root: PathBuf,
    },
    /// `real`: the path tried, when it is not the one named.
    Unreadable {
        real: Option<PathBuf>,
        reason: String,
    },
    Outside {
        real: PathBuf,
        root: PathBuf,
    },
    NotAFile {
        real: Option<PathBuf>,
    },
    NoProject,
    /// A deployer file outside `--allow-local`; `real`: where a link leads.
    NotAllowed {
        real: Option<PathBuf>,
        dirs: Vec<String>,
    },
}

impl fmt::Display for FileFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = |real: &Option<PathBuf>| real.as_ref().map_or(String::new(), |p| format!(" ({})", p.display()));
        match self {
            FileFault::NotRelative { root } => {
                write!(f, ": must be a path relative to the project root {}", root.display())
            }
            FileFault::Escapes { root } => {
                write!(f, ": escapes the project root {} ('..' is not allowed)", root.display())
            }
            FileFault::Unreadable { real, reason } => write!(f, "{}: {reason}", at(real)),
            FileFault::Outside { real, root } => {
                write!(f, ": resolves to {}, outside the project root {}", real.display(), root.display())
            }
            FileFault::NotAFile { real } => write!(f, "{}: not a regular file", at(real)),
            FileFault::NoProject => f.write_str(": no project here (give an absolute path)"),
            FileFault::NotAllowed { real, dirs } => write!(
                f,
                "{}: outside the directories local sources may be read from ({}); \
                 allow its directory with --allow-local DIR or KDEPLOY_ALLOW_LOCAL=DIR[:DIR...]",
                real.as_ref().map_or(String::new(), |p| format!(" (resolves to {})", p.display())),
                dirs.join(", ")
            ),
        }
    }
}

/// Why an artifact cannot be had; shown after its name. `from` and `url`
/// are as messages show them (credentials scrubbed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ArtifactFault {
    Unreadable {
        from: String,
        reason: String,
    },
    Checksum {
        from: String,
        want: String,
        got: String,
    },
    /// A `file://` URL read from where it may not be.
    Confined(Box<Error>),
    TooLarge {
        url: String,
        size: TooLarge,
    },
    /// Neither fetched here nor dropped into the downloads directory.
    NotHere {
        url: String,
        manual: PathBuf,
    },
    /// The fetcher's error, scrubbed again: a fetcher may be a test's.
    Fetch {
        url: String,
        reason: String,
    },
    Member {
        member: String,
        fault: MemberFault,
    },
}

impl fmt::Display for ArtifactFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ArtifactFault::Unreadable { from, reason } => write!(f, ": {from}: {reason}"),
            ArtifactFault::Checksum { from, want, got } => {
                write!(f, ": checksum mismatch for {from}: expected sha256 {want}, got {got}")
            }
            ArtifactFault::Confined(e) => write!(f, ": {e}"),
            ArtifactFault::TooLarge { url, size } => write!(f, ": {url}: {size}"),
            ArtifactFault::NotHere { url, manual } => write!(
                f,
                " not in the local cache and {url} cannot be fetched here; download it to {m} (e.g. curl -fLo {m} {url})",
                m = manual.display()
            ),
            ArtifactFault::Fetch { url, reason } => write!(f, ": cannot fetch {url}: {reason}"),
            ArtifactFault::Member { member, fault } => write!(f, ": member {member:?}: {fault}"),
        }
    }
}

/// Why a member of an archive cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MemberFault {
    #[error("{}: {reason}", .archive.display())]
    Unreadable { archive: PathBuf, reason: String },
    #[error("not a .tar.gz archive: {reason}")]
    NotTarGz { reason: String },
    #[error("corrupt archive: {reason}")]
    Corrupt { reason: String },
    #[error(transparent)]
    TooLarge(#[from] TooLarge),
    #[error("no such member in the archive")]
    Missing,
}

/// A download, or an archive member, past the download limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error(
    "{size} bytes, more than the download limit of {limit} bytes (--max-download or KDEPLOY_MAX_DOWNLOAD raises it)"
)]
pub struct TooLarge {
    pub size: u64,
    pub limit: u64,
}

/// What was asked of the binary cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheOp {
    Ask,
    Upload,
}

impl CacheOp {
    fn status_hint(self) -> &'static str {
        match self {
            CacheOp::Ask => "",
            CacheOp::Upload => " (does it take PUT requests?)",
        }
    }
}

impl fmt::Display for CacheOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            CacheOp::Ask => "asking",
            CacheOp::Upload => "uploading to",
        })
    }
}
