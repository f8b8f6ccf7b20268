//! Artifacts: downloads named by a declared sha256. `download_blob` finds
//! the download in the store (through the sha256 index), else in the
//! user's downloads directory, else asks the `Fetcher`; whatever it gets is
//! verified against the checksum before it is stored, so the store never
//! holds an unverified artifact. `fetch_all` does that for every artifact
//! of a run at once, deduplicated and in parallel, before any node is
//! reached. `file://` URLs here; HTTP(S) in `http.rs`.

use std::io::Read;
use std::path::Path;

use sha2::{Digest as _, Sha256};

use super::content::normalize_member;
use super::{Digest, Error, Result, Store};
use crate::schema::Artifact;

/// How far one download has got: bytes so far, and the total once the
/// server has said it.
pub type Progress<'a> = &'a (dyn Fn(u64, Option<u64>) + Sync);

/// Gets the bytes behind a URL. Pluggable so tests can supply downloads.
pub trait Fetcher: Send + Sync {
    /// `Ok(None)`: this fetcher cannot handle the URL's scheme. `progress`
    /// hears how the transfer goes.
    fn fetch(&self, url: &str, progress: Progress) -> std::result::Result<Option<Vec<u8>>, String>;
}

/// Hears about the downloads of [`fetch_all`]: kept apart from fetching so
/// the CLI can draw bars on a terminal and print lines elsewhere.
pub trait FetchEvents: Sync {
    /// `have` bytes of `a` so far, of `total` if known.
    fn progress(&self, _a: &Artifact, _have: u64, _total: Option<u64>) {}
    /// `a` is verified and stored: `bytes` long.
    fn fetched(&self, _a: &Artifact, _bytes: u64) {}
    /// `a` could not be had (the error is reported with the others).
    fn failed(&self, _a: &Artifact) {}
}

/// Hears nothing.
pub struct Quiet;

impl FetchEvents for Quiet {}

/// Handles `file:///abs/path` URLs only.
pub struct FileFetcher;

impl Fetcher for FileFetcher {
    fn fetch(&self, url: &str, _progress: Progress) -> std::result::Result<Option<Vec<u8>>, String> {
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

pub(crate) fn download_blob(
    store: &Store,
    fetcher: &dyn Fetcher,
    downloads: &Path,
    a: &Artifact,
    progress: Progress,
) -> Result<Digest> {
    let sha = a.sha256.to_ascii_lowercase();
    if let Some(d) = store.by_sha256(&sha) {
        return Ok(d);
    }
    let manual = downloads.join(&a.name);
    if manual.is_file() {
        let bytes = std::fs::read(&manual).map_err(|e| Error(format!("{}: {e}", manual.display())))?;
        return admit(store, a, &bytes, &manual.display().to_string());
    }
    match fetcher.fetch(&a.url, progress) {
        Ok(Some(bytes)) => admit(store, a, &bytes, &a.url),
        Ok(None) => Err(Error(format!(
            "artifact {} not in the local cache and {} cannot be fetched here; download it to {} (e.g. curl -fLo {} {})",
            a.name,
            a.url,
            manual.display(),
            manual.display(),
            a.url
        ))),
        Err(e) => Err(Error(format!("artifact {}: cannot fetch {}: {e}", a.name, a.url))),
    }
}

/// What [`fetch_all`] did: artifacts already in the store, and those it
/// fetched (name, bytes).
#[derive(Debug, Default)]
pub struct Fetched {
    pub cached: usize,
    pub fetched: Vec<(String, u64)>,
}

/// Every artifact of `artifacts` in the store: each sha256 once, those
/// missing fetched by `parallel` workers, each verified before it is
/// stored. `events` hears how each goes. Every failure is reported, not
/// only the first.
pub(crate) fn fetch_all(
    store: &Store,
    fetcher: &dyn Fetcher,
    downloads: &Path,
    artifacts: &[&Artifact],
    parallel: usize,
    events: &dyn FetchEvents,
) -> Result<Fetched> {
    let mut seen = std::collections::BTreeMap::new();
    for a in artifacts {
        seen.entry(a.sha256.to_ascii_lowercase()).or_insert(*a);
    }
    let (cached, missing): (Vec<&Artifact>, Vec<&Artifact>) =
        seen.into_values().partition(|a| store.by_sha256(&a.sha256.to_ascii_lowercase()).is_some());
    let next = std::sync::atomic::AtomicUsize::new(0);
    let results = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..parallel.clamp(1, missing.len().max(1)) {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                let Some(a) = missing.get(i) else { break };
                let progress = |have, total| events.progress(a, have, total);
                let r = download_blob(store, fetcher, downloads, a, &progress)
                    .map(|d| std::fs::metadata(store.blob_path(&d)).map_or(0, |m| m.len()));
                match &r {
                    Ok(bytes) => events.fetched(a, *bytes),
                    Err(_) => events.failed(a),
                }
                results.lock().expect("no worker panics holding it").push((a.name.clone(), r));
            });
        }
    });
    let mut fetched = Vec::new();
    let mut errors = Vec::new();
    for (name, r) in results.into_inner().expect("no worker panics holding it") {
        match r {
            Ok(bytes) => fetched.push((name, bytes)),
            Err(e) => errors.push(e.0),
        }
    }
    if !errors.is_empty() {
        errors.sort();
        return Err(Error(errors.join("\n")));
    }
    fetched.sort();
    Ok(Fetched { cached: cached.len(), fetched })
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
