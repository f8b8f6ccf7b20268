//! Blob naming (`Digest`, a blake3 hash) and the on-disk store:
//! `<dir>/blobs/<blake3 hex>` holds the bytes, `<dir>/sha256/<hex>` maps an
//! artifact's declared sha256 to the blob of its download. Writes go through
//! a temporary file and a rename, so a blob is either whole or absent even
//! if kdeploy is killed mid-write.

use std::collections::BTreeSet;
use std::fmt;
use std::fs;
use std::io::{Read, Write};
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

fn io_err(what: &'static str, path: &Path, e: std::io::Error) -> Error {
    Error::Io { what, path: path.to_path_buf(), reason: e.to_string() }
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

    /// Store what `from` reads, streamed (a download is never held whole in
    /// memory), if `accept` takes its sha256 (hex): bytes it refuses never
    /// become a blob. Names the blob.
    pub fn put_verified(&self, from: &mut dyn Read, accept: impl FnOnce(&str) -> Result<()>) -> Result<Digest> {
        use sha2::Digest as _;
        let tmp = self.tmp_path(&self.dir.join("blobs"))?;
        let written = (|| {
            let mut out = fs::File::create(&tmp).map_err(|e| io_err("cannot create", &tmp, e))?;
            let (mut b3, mut sha) = (blake3::Hasher::new(), sha2::Sha256::new());
            let mut buf = vec![0u8; 256 * 1024];
            loop {
                let n = from.read(&mut buf).map_err(|e| io_err("cannot read into", &tmp, e))?;
                if n == 0 {
                    break;
                }
                b3.update(&buf[..n]);
                sha.update(&buf[..n]);
                out.write_all(&buf[..n]).map_err(|e| io_err("cannot write", &tmp, e))?;
            }
            accept(&hex::encode(sha.finalize()))?;
            out.sync_all().map_err(|e| io_err("cannot write", &tmp, e))?;
            Ok(Digest(*b3.finalize().as_bytes()))
        })();
        match written {
            Ok(d) => {
                let dest = self.blob_path(&d);
                fs::rename(&tmp, &dest).map_err(|e| io_err("cannot rename into", &dest, e))?;
                Ok(d)
            }
            Err(e) => {
                let _ = fs::remove_file(&tmp);
                Err(e)
            }
        }
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

    /// Remove every blob not in `keep`, the download records (`sha256/`)
    /// naming a blob that is gone, the compressed forms of the blobs that
    /// went (`zstd/`) and their sha256 records (`sha256-of/`); `dry_run`:
    /// remove nothing.
    /// Files being written (`.tmp-*`) are left alone: another kdeploy may
    /// be writing them. Returns how many blobs went and their bytes.
    pub fn gc(&self, keep: &BTreeSet<Digest>, dry_run: bool) -> Result<(usize, u64)> {
        let (mut count, mut bytes) = (0, 0);
        let blobs = self.dir.join("blobs");
        let mut gone = BTreeSet::new();
        for e in read_dir_or_empty(&blobs)? {
            let Some(d) = e.file_name().to_str().and_then(Digest::parse) else { continue };
            if keep.contains(&d) {
                continue;
            }
            let p = e.path();
            let len = e.metadata().map_err(|err| io_err("cannot read", &p, err))?.len();
            if !dry_run {
                fs::remove_file(&p).map_err(|err| io_err("cannot remove", &p, err))?;
            }
            gone.insert(d);
            count += 1;
            bytes += len;
        }
        for e in read_dir_or_empty(&self.dir.join("sha256"))? {
            let p = e.path();
            let named = fs::read_to_string(&p).ok().and_then(|t| Digest::parse(t.trim()));
            let dangling = named.is_none_or(|d| gone.contains(&d) || !self.has(&d));
            if dangling && !dry_run && !e.file_name().to_string_lossy().starts_with(".tmp-") {
                fs::remove_file(&p).map_err(|err| io_err("cannot remove", &p, err))?;
            }
        }
        super::compressed::gc(self, keep, dry_run)?;
        super::sha256_of::gc(self, dry_run)?;
        Ok((count, bytes))
    }

    /// A temporary file's path in `dir` (made if needed): unique per
    /// process and thread, so concurrent writers of the same blob each
    /// rename a complete file, and the last rename wins harmlessly.
    fn tmp_path(&self, dir: &Path) -> Result<PathBuf> {
        fs::create_dir_all(dir).map_err(|e| io_err("cannot create", dir, e))?;
        Ok(dir.join(format!(".tmp-{}-{:?}", std::process::id(), std::thread::current().id())))
    }

    pub(super) fn write_atomic(&self, dest: &Path, bytes: &[u8]) -> Result<()> {
        let parent = dest.parent().unwrap_or(&self.dir);
        let tmp = self.tmp_path(parent)?;
        let mut f = fs::File::create(&tmp).map_err(|e| io_err("cannot create", &tmp, e))?;
        f.write_all(bytes).and_then(|_| f.sync_all()).map_err(|e| io_err("cannot write", &tmp, e))?;
        fs::rename(&tmp, dest).map_err(|e| io_err("cannot rename into", dest, e))
    }
}

/// The entries of `dir`; none when it does not exist.
fn read_dir_or_empty(dir: &Path) -> Result<Vec<fs::DirEntry>> {
    match fs::read_dir(dir) {
        Ok(rd) => rd.collect::<std::io::Result<Vec<_>>>().map_err(|e| io_err("cannot list", dir, e)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(e) => Err(io_err("cannot list", dir, e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gc_keeps_what_is_named_and_drops_dangling_download_records() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::new(dir.path());
        assert_eq!(store.gc(&BTreeSet::new(), false).unwrap(), (0, 0), "an absent store is empty");
        let (a, b) = (store.put(b"kept").unwrap(), store.put(b"garbage!").unwrap());
        store.record_sha256("aa", &a).unwrap();
        store.record_sha256("bb", &b).unwrap();
        let keep: BTreeSet<Digest> = [a].into();
        assert_eq!(store.gc(&keep, true).unwrap(), (1, 8));
        assert!(store.has(&b) && store.by_sha256("bb").is_some(), "a dry run removes nothing");
        assert_eq!(store.gc(&keep, false).unwrap(), (1, 8));
        assert!(store.has(&a) && !store.has(&b));
        assert_eq!(store.by_sha256("aa"), Some(a));
        assert!(!dir.path().join("sha256/bb").exists());
        assert_eq!(store.gc(&keep, false).unwrap(), (0, 0));
    }
}
