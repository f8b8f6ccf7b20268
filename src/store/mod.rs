//! The deployer's local content-addressed store: every blob a closure needs
//! (file contents, unit texts, downloaded artifacts) is kept once, named by
//! the blake3 hex of its bytes. Default location `.kdeploy/store/` under the
//! project root. `content` names contents without storing them (what hashing
//! needs), `project` confines project files to the project root, `artifact`
//! turns a declared download into a verified blob, `cache` puts blobs into
//! an HTTP binary cache the nodes fetch from, `compressed` keeps the zstd
//! form of large blobs for the transfer, `sha256_of` the sha256 nodes check
//! each pushed blob against, `hash_index` the hashes of the
//! deployer's files between runs (by stat, as git's index). Secrets never enter the
//! blob store: `secrets` keeps them apart (0700/0600) and hashes them with a
//! key, `pki` makes the certificates among them. `confine` says which files
//! of the deployer a source may read, `key_material` which plain sources
//! hold keys (refused: keys travel as secrets). `error` says what can go
//! wrong in all of them, one variant a kind of failure.

mod artifact;
mod blobs;
pub mod cache;
pub mod compressed;
pub mod confine;
mod content;
mod error;
mod hash_index;
pub mod http;
pub mod key_material;
pub mod pki;
mod project;
mod secret_command;
pub mod secrets;
pub mod sha256_of;

pub use artifact::{max_download, FetchEvents, Fetched, Fetcher, FileFetcher, Progress, Quiet, DEFAULT_MAX_DOWNLOAD};
pub use blobs::{Digest, Store};
pub use confine::Confinement;
pub use content::{ContentId, Readable, Resolver};
pub use error::{ArtifactFault, CacheOp, Error, FileFault, MemberFault, TooLarge};
pub use project::{project_file_path, read_project_file};
pub use secrets::SecretStore;

/// Writes `bytes` to `path` whole or not at all, readable by its owner only
/// (a temporary file beside it, 0600, renamed over it): what the caches
/// beside the store keep (`hash_index`, the evaluation cache).
pub fn write_private(path: &std::path::Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let tmp = path.with_extension(format!("tmp.{}", std::process::id()));
    let written = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&tmp)
        .and_then(|mut f| f.write_all(bytes))
        .and_then(|()| std::fs::rename(&tmp, path));
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

pub type Result<T> = std::result::Result<T, Error>;
