//! Blobs compressed for transit: the zstd form of a large blob, made once
//! and kept beside the store (`zstd/<blake3>.zst`) so that every node and
//! every later run sends the same compressed file without compressing
//! again. A blob that zstd does not shrink by a tenth (already compressed
//! archives, random keys) is remembered as such (`zstd/<blake3>.raw`, an
//! empty marker) and sent as it is. Nodes check the sha256 of what they
//! decompress, so a damaged compressed file is refused there, never
//! admitted.

use std::fs;
use std::io::{BufReader, Write};
use std::path::{Path, PathBuf};

use super::{Digest, Error, Result, Store};

/// zstd level: 1. On 130 MB of the lab's binaries it takes 0.45 s on one
/// core against level 3's 0.74 s, for 8% more bytes (53.8 MB against
/// 49.8 MB), and decompresses as fast: a first converge waits for the
/// compressor, later ones send the kept form. Done once per blob. One thread per
/// blob: the deployer compresses several blobs at once (as many as it has
/// CPUs, `deploy/push.rs`), and zstd's own threads would each add jobs of
/// 8 MiB in and out -- 30 MB of the deployer's peak on a first converge.
const LEVEL: i32 = 1;

/// log2 of the compression window (see `compress`).
const WINDOW_LOG: u32 = 20;

/// Where the compressed form of `d` is, making it from `src` (the blob's
/// bytes) the first time; `None` when compression does not pay for it.
pub fn zstd_of(store: &Store, d: &Digest, src: &Path) -> Result<Option<PathBuf>> {
    let dir = store.dir().join("zstd");
    let zst = dir.join(format!("{}.zst", d.hex()));
    let raw = dir.join(format!("{}.raw", d.hex()));
    if zst.is_file() {
        return Ok(Some(zst));
    }
    if raw.is_file() {
        return Ok(None);
    }
    fs::create_dir_all(&dir).map_err(|e| err("cannot create", &dir, e))?;
    let tmp = dir.join(format!(".tmp-{}-{:?}", std::process::id(), std::thread::current().id()));
    let (original, compressed) = compress(src, &tmp).inspect_err(|_| {
        let _ = fs::remove_file(&tmp);
    })?;
    if compressed * 10 > original * 9 {
        let _ = fs::remove_file(&tmp);
        fs::write(&raw, b"").map_err(|e| err("cannot write", &raw, e))?;
        return Ok(None);
    }
    fs::rename(&tmp, &zst).map_err(|e| err("cannot rename into", &zst, e))?;
    Ok(Some(zst))
}

/// Drop the compressed form of `d` (a node refused it): the next run that
/// needs it makes it again.
pub fn forget(store: &Store, d: &Digest) {
    let _ = fs::remove_file(store.dir().join("zstd").join(format!("{}.zst", d.hex())));
}

/// Compress `src` into `dest` (synced: a file that outlives a crash is
/// whole); the sizes before and after.
fn compress(src: &Path, dest: &Path) -> Result<(u64, u64)> {
    let input = fs::File::open(src).map_err(|e| err("cannot read", src, e))?;
    let original = input.metadata().map_err(|e| err("cannot read", src, e))?.len();
    let out = fs::File::create(dest).map_err(|e| err("cannot create", dest, e))?;
    let mut enc = zstd::Encoder::new(out, LEVEL).map_err(|e| err("cannot compress into", dest, e))?;
    // a 1 MiB window instead of level 3's 2 MiB: a compressor's memory is
    // mostly its window, and binaries lose well under 1% of the saving
    enc.window_log(WINDOW_LOG).map_err(|e| err("cannot compress into", dest, e))?;
    std::io::copy(&mut BufReader::new(input), &mut enc).map_err(|e| err("cannot compress", src, e))?;
    let mut out = enc.finish().map_err(|e| err("cannot compress into", dest, e))?;
    out.flush().and_then(|_| out.sync_all()).map_err(|e| err("cannot write", dest, e))?;
    let compressed = out.metadata().map_err(|e| err("cannot read", dest, e))?.len();
    Ok((original, compressed))
}

/// Remove the compressed forms of blobs not in `keep` (part of
/// [`Store::gc`]).
pub(super) fn gc(store: &Store, keep: &std::collections::BTreeSet<Digest>, dry_run: bool) -> Result<()> {
    let dir = store.dir().join("zstd");
    let entries = match fs::read_dir(&dir) {
        Ok(rd) => rd,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(err("cannot list", &dir, e)),
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let stem = name.split('.').next().unwrap_or("");
        let Some(d) = Digest::parse(stem) else { continue };
        if !keep.contains(&d) && !dry_run {
            fs::remove_file(e.path()).map_err(|x| err("cannot remove", &e.path(), x))?;
        }
    }
    Ok(())
}

fn err(what: &'static str, path: &Path, e: std::io::Error) -> Error {
    Error::Io { what, path: path.to_path_buf(), reason: e.to_string() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compresses_once_and_remembers_what_does_not_pay() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::new(dir.path().join("store"));
        let text = "kubelet kubeadm etcd containerd\n".repeat(40_000).into_bytes();
        let d = store.put(&text).unwrap();
        let zst = zstd_of(&store, &d, &store.blob_path(&d)).unwrap().expect("text compresses");
        assert!(fs::metadata(&zst).unwrap().len() * 10 < text.len() as u64);
        assert_eq!(zstd::decode_all(fs::File::open(&zst).unwrap()).unwrap(), text);
        // made once: the next call finds it (the source is not read again)
        fs::remove_file(store.blob_path(&d)).unwrap();
        assert_eq!(zstd_of(&store, &d, &store.blob_path(&d)).unwrap(), Some(zst));

        let mut noise = vec![0u8; 1 << 20];
        blake3::Hasher::new().finalize_xof().fill(&mut noise);
        let n = store.put(&noise).unwrap();
        assert_eq!(zstd_of(&store, &n, &store.blob_path(&n)).unwrap(), None);
        assert!(dir.path().join("store/zstd").join(format!("{}.raw", n.hex())).is_file());

        let keep = [n].into_iter().collect();
        gc(&store, &keep, false).unwrap();
        assert!(!dir.path().join("store/zstd").join(format!("{}.zst", d.hex())).exists());
        assert!(dir.path().join("store/zstd").join(format!("{}.raw", n.hex())).exists());
    }
}
