//! The sha256 of each blob pushed from a file, kept beside the store
//! (`sha256-of/<blake3>`) once worked out. A node checks every blob it is
//! sent against its sha256, and hashing a first converge's binaries again
//! on every run cost the deployer a tenth of the transfer before its first
//! byte. The first time, the file is read once for both hashes, and the
//! record is kept only if the blake3 is the blob's name: a record says
//! what the blob's bytes are, so a file changed since the evaluation named
//! it is refused here, and a blob damaged after it is refused by the node.

use std::fs;
use std::path::Path;

use super::content::each_chunk;
use super::{Digest, Error, Result, Store};

/// The sha256 (hex) of blob `d`, whose bytes are the file `path`: as
/// recorded, else worked out (and recorded).
pub fn sha256_of(store: &Store, d: &Digest, path: &Path) -> Result<String> {
    let record = store.dir().join("sha256-of").join(d.hex());
    if let Ok(text) = fs::read_to_string(&record) {
        if is_sha256_hex(text.trim()) {
            return Ok(text.trim().to_string());
        }
    }
    let (blake3, sha256) = both_hashes(path)?;
    if blake3 != *d {
        return Err(Error::NotTheBlob { path: path.to_path_buf(), blob: d.hex() });
    }
    // (best effort: without the record the next run hashes again)
    let _ = store.write_atomic(&record, sha256.as_bytes());
    Ok(sha256)
}

/// Drop the record of blob `d`: it is worked out again when next asked
/// for (a node refused the blob sent with it: a record that a damaged
/// disk or a hand edit made wrong would otherwise be trusted forever).
pub fn forget(store: &Store, d: &Digest) {
    let _ = fs::remove_file(store.dir().join("sha256-of").join(d.hex()));
}

/// Drop the records of blobs no longer in the store (part of [`Store::gc`]).
pub(super) fn gc(store: &Store, dry_run: bool) -> Result<()> {
    let dir = store.dir().join("sha256-of");
    let entries = match fs::read_dir(&dir) {
        Ok(rd) => rd,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(Error::Io { what: "cannot list", path: dir, reason: e.to_string() }),
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let kept = Digest::parse(&name).is_some_and(|d| store.has(&d));
        if !kept && !dry_run && !name.starts_with(".tmp-") {
            let p = e.path();
            fs::remove_file(&p).map_err(|x| Error::Io { what: "cannot remove", path: p, reason: x.to_string() })?;
        }
    }
    Ok(())
}

/// The blake3 and the sha256 (hex) of the file at `path`, read once.
fn both_hashes(path: &Path) -> Result<(Digest, String)> {
    use sha2::Digest as _;
    let (mut b3, mut sha) = (blake3::Hasher::new(), sha2::Sha256::new());
    each_chunk(path, |c| {
        b3.update(c);
        sha.update(c);
    })?;
    Ok((Digest(*b3.finalize().as_bytes()), hex::encode(sha.finalize())))
}

fn is_sha256_hex(s: &str) -> bool {
    s.len() == 64 && s.bytes().all(|b| b.is_ascii_hexdigit())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sha256_hex(bytes: &[u8]) -> String {
        use sha2::Digest as _;
        hex::encode(sha2::Sha256::digest(bytes))
    }

    #[test]
    fn worked_out_once_then_read_from_the_record() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::new(dir.path().join("store"));
        let file = dir.path().join("etcd");
        fs::write(&file, b"an etcd binary").unwrap();
        let d = Digest::of(b"an etcd binary");
        assert_eq!(sha256_of(&store, &d, &file).unwrap(), sha256_hex(b"an etcd binary"));
        // the record answers: the file is not read again
        fs::remove_file(&file).unwrap();
        assert_eq!(sha256_of(&store, &d, &file).unwrap(), sha256_hex(b"an etcd binary"));
        // a damaged record is worked out again (and the file is gone: said so)
        fs::write(dir.path().join("store/sha256-of").join(d.hex()), "not a hash").unwrap();
        let e = sha256_of(&store, &d, &file).unwrap_err();
        assert!(e.to_string().contains(&file.display().to_string()), "{e}");
    }

    #[test]
    fn a_wrong_record_is_trusted_until_forgotten() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::new(dir.path().join("store"));
        let file = dir.path().join("etcd");
        fs::write(&file, b"an etcd binary").unwrap();
        let d = Digest::of(b"an etcd binary");
        let wrong = sha256_hex(b"other bytes");
        fs::create_dir_all(dir.path().join("store/sha256-of")).unwrap();
        fs::write(dir.path().join("store/sha256-of").join(d.hex()), &wrong).unwrap();
        assert_eq!(sha256_of(&store, &d, &file).unwrap(), wrong, "a well-formed record is believed");
        forget(&store, &d);
        assert_eq!(sha256_of(&store, &d, &file).unwrap(), sha256_hex(b"an etcd binary"));
        let record = fs::read_to_string(dir.path().join("store/sha256-of").join(d.hex())).unwrap();
        assert_eq!(record, sha256_hex(b"an etcd binary"), "recorded anew");
    }

    #[test]
    fn a_file_that_is_not_the_blob_is_refused_and_not_recorded() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::new(dir.path().join("store"));
        let file = dir.path().join("etcd");
        fs::write(&file, b"changed since the evaluation").unwrap();
        let d = Digest::of(b"an etcd binary");
        let e = sha256_of(&store, &d, &file).unwrap_err();
        assert!(e.to_string().contains(&d.hex()), "{e}");
        assert!(!dir.path().join("store/sha256-of").join(d.hex()).exists());
    }

    #[test]
    fn gc_drops_the_records_of_blobs_gone() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::new(dir.path().join("store"));
        let (kept, gone) = (store.put(b"kept").unwrap(), Digest::of(b"gone"));
        for (d, bytes) in [(kept, &b"kept"[..]), (gone, &b"gone"[..])] {
            let f = dir.path().join(d.hex());
            fs::write(&f, bytes).unwrap();
            sha256_of(&store, &d, &f).unwrap();
        }
        gc(&store, false).unwrap();
        assert!(dir.path().join("store/sha256-of").join(kept.hex()).exists());
        assert!(!dir.path().join("store/sha256-of").join(gone.hex()).exists());
    }
}
