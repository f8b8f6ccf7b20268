//! Artifacts: downloads named by a declared sha256. `download_blob` finds
//! the download in the store (through the sha256 index), else in the
//! user's downloads directory, else asks the `Fetcher`; whatever it gets is
//! verified against the checksum before it is stored, so the store never
//! holds an unverified artifact. Only `file://` URLs are fetched for now.

use std::io::Read;
use std::path::Path;

use sha2::{Digest as _, Sha256};

use super::content::normalize_member;
use super::{Digest, Error, Result, Store};
use crate::schema::Artifact;

/// Gets the bytes behind a URL. Pluggable so tests (and later an HTTP
/// client) can supply downloads.
pub trait Fetcher: Send + Sync {
    /// `Ok(None)`: this fetcher cannot handle the URL's scheme.
    fn fetch(&self, url: &str) -> std::result::Result<Option<Vec<u8>>, String>;
}

/// Handles `file:///abs/path` URLs only.
pub struct FileFetcher;

impl Fetcher for FileFetcher {
    fn fetch(&self, url: &str) -> std::result::Result<Option<Vec<u8>>, String> {
        match url.strip_prefix("file://") {
            Some(path) => std::fs::read(path).map(Some).map_err(|e| format!("{path}: {e}")),
            None => Ok(None),
        }
    }
}

fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// Verify and store a download; record it in the sha256 index.
fn admit(store: &Store, a: &Artifact, bytes: &[u8], from: &str) -> Result<Digest> {
    let got = sha256_hex(bytes);
    if !got.eq_ignore_ascii_case(&a.sha256) {
        return Err(Error(format!(
            "artifact {}: checksum mismatch for {from}: expected sha256 {}, got {got}",
            a.name, a.sha256
        )));
    }
    let d = store.put(bytes)?;
    store.record_sha256(&a.sha256.to_ascii_lowercase(), &d)?;
    Ok(d)
}

pub(crate) fn download_blob(store: &Store, fetcher: &dyn Fetcher, downloads: &Path, a: &Artifact) -> Result<Digest> {
    let sha = a.sha256.to_ascii_lowercase();
    if let Some(d) = store.by_sha256(&sha) {
        return Ok(d);
    }
    let manual = downloads.join(&a.name);
    if manual.is_file() {
        let bytes = std::fs::read(&manual).map_err(|e| Error(format!("{}: {e}", manual.display())))?;
        return admit(store, a, &bytes, &manual.display().to_string());
    }
    match fetcher.fetch(&a.url) {
        Ok(Some(bytes)) => admit(store, a, &bytes, &a.url),
        Ok(None) => Err(Error(format!(
            "artifact {} not in the local cache; download it to {} (e.g. curl -fLo {} {}); no network fetch is implemented yet",
            a.name,
            manual.display(),
            manual.display(),
            a.url
        ))),
        Err(e) => Err(Error(format!("artifact {}: cannot fetch {}: {e}", a.name, a.url))),
    }
}

/// The member of a .tar.gz/.tgz archive (a leading `./` on either side is
/// ignored). Other archive formats are not used by the stdlib.
pub(crate) fn extract_member(archive: &[u8], member: &str) -> std::result::Result<Vec<u8>, String> {
    let want = normalize_member(member);
    let mut tar = tar::Archive::new(flate2::read::GzDecoder::new(archive));
    let entries = tar.entries().map_err(|e| format!("not a .tar.gz archive: {e}"))?;
    for entry in entries {
        let mut entry = entry.map_err(|e| format!("corrupt archive: {e}"))?;
        let path = entry.path().map_err(|e| format!("corrupt archive: {e}"))?.to_string_lossy().into_owned();
        if normalize_member(&path) == want && entry.header().entry_type().is_file() {
            let mut out = Vec::new();
            entry.read_to_end(&mut out).map_err(|e| format!("corrupt archive: {e}"))?;
            return Ok(out);
        }
    }
    Err("no such member in the archive".into())
}
