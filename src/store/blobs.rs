//! Blob naming (`Digest`, a blake3 hash) and the on-disk store:
//! `<dir>/blobs/<blake3 hex>` holds the bytes, `<dir>/sha256/<hex>` maps an
//! artifact's declared sha256 to the blob of its download. Writes go through
//! a temporary file and a rename, so a blob is either whole or absent even
//! if kdeploy is killed mid-write.

use std::fmt;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use super::{Error, Result};

/// A blake3 hash: the name of a blob, a phase or a node.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Digest(pub [u8; 32]);

impl Digest {
    pub fn of(bytes: &[u8]) -> Digest {
        Digest(*blake3::hash(bytes).as_bytes())
    }

    pub fn hex(&self) -> String {
        hex::encode(self.0)
    }

    /// The first 12 hex digits, enough to tell phases apart in listings.
    pub fn short(&self) -> String {
        hex::encode(&self.0[..6])
    }

    pub fn parse(s: &str) -> Option<Digest> {
        let mut out = [0u8; 32];
        hex::decode_to_slice(s, &mut out).ok()?;
        Some(Digest(out))
    }
}

impl fmt::Display for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.hex())
    }
}

impl fmt::Debug for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Digest({})", self.short())
    }
}

impl serde::Serialize for Digest {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(&self.hex())
    }
}

/// A store directory. Opening creates nothing; the first write does.
#[derive(Debug, Clone)]
pub struct Store {
    dir: PathBuf,
}

fn io_err(what: &str, path: &Path, e: std::io::Error) -> Error {
    Error(format!("{what} {}: {e}", path.display()))
}

impl Store {
    pub fn new(dir: impl Into<PathBuf>) -> Store {
        Store { dir: dir.into() }
    }

    /// `.kdeploy/store` under the project root.
    pub fn default_dir(project_root: &Path) -> PathBuf {
        project_root.join(".kdeploy").join("store")
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn blob_path(&self, d: &Digest) -> PathBuf {
        self.dir.join("blobs").join(d.hex())
    }

    pub fn has(&self, d: &Digest) -> bool {
        self.blob_path(d).is_file()
    }

    pub fn read(&self, d: &Digest) -> Result<Vec<u8>> {
        let p = self.blob_path(d);
        fs::read(&p).map_err(|e| io_err("cannot read blob", &p, e))
    }

    /// Store `bytes` (once: an existing blob is not rewritten) and name it.
    pub fn put(&self, bytes: &[u8]) -> Result<Digest> {
        let d = Digest::of(bytes);
        if !self.has(&d) {
            self.write_atomic(&self.blob_path(&d), bytes)?;
        }
        Ok(d)
    }

    /// The blob recorded for a download with this declared sha256, if any
    /// (and only if the blob itself is still there).
    pub fn by_sha256(&self, sha256: &str) -> Option<Digest> {
        let text = fs::read_to_string(self.dir.join("sha256").join(sha256)).ok()?;
        Digest::parse(text.trim()).filter(|d| self.has(d))
    }

    pub fn record_sha256(&self, sha256: &str, d: &Digest) -> Result<()> {
        self.write_atomic(&self.dir.join("sha256").join(sha256), d.hex().as_bytes())
    }

    fn write_atomic(&self, dest: &Path, bytes: &[u8]) -> Result<()> {
        let parent = dest.parent().expect("store paths have a parent");
        fs::create_dir_all(parent).map_err(|e| io_err("cannot create", parent, e))?;
        // Unique per process and thread: concurrent writers of the same blob
        // each rename a complete file, and the last rename wins harmlessly.
        let tmp = parent.join(format!(".tmp-{}-{:?}", std::process::id(), std::thread::current().id()));
        let mut f = fs::File::create(&tmp).map_err(|e| io_err("cannot create", &tmp, e))?;
        f.write_all(bytes).and_then(|_| f.sync_all()).map_err(|e| io_err("cannot write", &tmp, e))?;
        fs::rename(&tmp, dest).map_err(|e| io_err("cannot rename into", dest, e))
    }
}
