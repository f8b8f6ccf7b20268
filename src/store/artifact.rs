//! Artifacts: downloads named by a declared sha256. `Getter::download_blob`
//! finds the download in the store (through the sha256 index), else in the
//! user's downloads directory, else reads a `file://` URL itself (confined
//! exactly as `local` sources are: `confine.rs`), else asks the `Fetcher`
//! (HTTP(S) in `http.rs`); whatever it gets is streamed into the store and
//! verified against the checksum on the way, so the store never holds an
//! unverified artifact and no download is ever held whole in memory.
//! Every download is bounded ([`max_download`]). `fetch_all` does that
//! for every artifact of a run at once, deduplicated and in parallel,
//! before any node is reached.

use std::io::Read;
use std::path::{Path, PathBuf};

use super::confine::Confinement;
use super::content::normalize_member;
use super::http::scrub;
use super::{ArtifactFault, Digest, Error, MemberFault, Result, Store, TooLarge};
use crate::schema::Artifact;

/// How far one download has got: bytes so far, and the total once the
/// server has said it.
pub type Progress<'a> = &'a (dyn Fn(u64, Option<u64>) + Sync);

/// The largest download taken when `KDEPLOY_MAX_DOWNLOAD` does not say
/// (bytes): 4 GiB, above any Kubernetes release file or image archive.
pub const DEFAULT_MAX_DOWNLOAD: u64 = 4 << 30;

/// The largest download taken: `KDEPLOY_MAX_DOWNLOAD` (bytes), else
/// [`DEFAULT_MAX_DOWNLOAD`].
pub fn max_download() -> u64 {
    std::env::var("KDEPLOY_MAX_DOWNLOAD").ok().and_then(|v| v.trim().parse().ok()).unwrap_or(DEFAULT_MAX_DOWNLOAD)
}

/// Why a download of `size` bytes is not taken (`None`: it is).
pub fn too_large(size: u64, limit: u64) -> Option<TooLarge> {
    (size > limit).then_some(TooLarge { size, limit })
}

/// Gets the bytes behind a URL. Pluggable so tests can supply downloads.
pub trait Fetcher: Send + Sync {
    /// `Ok(None)`: this fetcher cannot handle the URL's scheme. Else the
    /// path of a complete download of at most `limit` bytes, which the
    /// caller verifies, stores and removes. `progress` hears how the
    /// transfer goes.
    fn fetch(&self, url: &str, limit: u64, progress: Progress) -> Result<Option<PathBuf>>;
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

/// Fetches nothing itself: `file://` URLs are read by the resolver
/// (confined as `local` sources are), and this fetcher is for working
/// offline (and for tests), where any other URL is an artifact to drop
/// into the downloads directory by hand.
pub struct FileFetcher;

impl Fetcher for FileFetcher {
    fn fetch(&self, _url: &str, _limit: u64, _progress: Progress) -> Result<Option<PathBuf>> {
        Ok(None)
    }
}

/// Where one run's artifacts come from.
pub(crate) struct Getter<'a> {
    pub store: &'a Store,
    pub fetcher: &'a dyn Fetcher,
    /// Where a user drops downloads by hand.
    pub downloads: PathBuf,
    /// Where `file://` URLs may be read.
    pub confine: &'a Confinement,
    pub max_download: u64,
}

impl Getter<'_> {
    /// Verify and store the file at `path` (from `from`, as messages name
    /// it), streamed; record it in the sha256 index.
    fn admit(&self, a: &Artifact, path: &Path, from: &str) -> Result<Digest> {
        let from = from.to_string();
        let mut f = std::fs::File::open(path)
            .map_err(|e| fault(a, ArtifactFault::Unreadable { from: from.clone(), reason: e.to_string() }))?;
        let want = a.sha256.to_ascii_lowercase();
        let d = self.store.put_verified(&mut f, |got| match got == want {
            true => Ok(()),
            false => Err(fault(a, ArtifactFault::Checksum { from, want: a.sha256.clone(), got: got.to_string() })),
        })?;
        self.store.record_sha256(&want, &d)?;
        Ok(d)
    }

    pub fn download_blob(&self, a: &Artifact, progress: Progress) -> Result<Digest> {
        let sha = a.sha256.to_ascii_lowercase();
        if let Some(d) = self.store.by_sha256(&sha) {
            return Ok(d);
        }
        let manual = self.downloads.join(&a.name);
        if manual.is_file() {
            return self.admit(a, &manual, &manual.display().to_string());
        }
        let url = scrub(&a.url, &a.url);
        if let Some(path) = a.url.strip_prefix("file://") {
            let real = self.confine.deployer_file(path).map_err(|e| fault(a, ArtifactFault::Confined(Box::new(e))))?;
            let unreadable = |e: std::io::Error| ArtifactFault::Unreadable { from: url.clone(), reason: e.to_string() };
            let size = std::fs::metadata(&real).map_err(|e| fault(a, unreadable(e)))?.len();
            if let Some(size) = too_large(size, self.max_download) {
                return Err(fault(a, ArtifactFault::TooLarge { url, size }));
            }
            return self.admit(a, &real, &url);
        }
        match self.fetcher.fetch(&a.url, self.max_download, progress) {
            Ok(Some(path)) => {
                let r = self.admit(a, &path, &url);
                // verified or not, the download is done with (a mismatch must not resume from it)
                let _ = std::fs::remove_file(&path);
                r
            }
            Ok(None) => Err(fault(a, ArtifactFault::NotHere { url, manual })),
            Err(e) => Err(fault(a, ArtifactFault::Fetch { url, reason: scrub(&e.to_string(), &a.url) })),
        }
    }
}

fn fault(a: &Artifact, fault: ArtifactFault) -> Error {
    Error::Artifact { name: a.name.clone(), fault }
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
    getter: &Getter,
    artifacts: &[&Artifact],
    parallel: usize,
    events: &dyn FetchEvents,
) -> Result<Fetched> {
    let mut seen = std::collections::BTreeMap::new();
    for a in artifacts {
        seen.entry(a.sha256.to_ascii_lowercase()).or_insert(*a);
    }
    let store = getter.store;
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
                let r = getter
                    .download_blob(a, &progress)
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
            Err(e) => errors.push(e),
        }
    }
    if !errors.is_empty() {
        errors.sort_by_cached_key(ToString::to_string);
        return Err(Error::Artifacts(errors));
    }
    fetched.sort();
    Ok(Fetched { cached: cached.len(), fetched })
}

/// The member of the .tar.gz/.tgz archive at `archive` (a leading `./`
/// on either side is ignored), read from the file, of at most `limit`
/// bytes. Other archive formats are not used by the stdlib.
pub(crate) fn extract_member(archive: &Path, member: &str, limit: u64) -> std::result::Result<Vec<u8>, MemberFault> {
    let want = normalize_member(member);
    let file = std::fs::File::open(archive)
        .map_err(|e| MemberFault::Unreadable { archive: archive.to_path_buf(), reason: e.to_string() })?;
    let mut tar = tar::Archive::new(flate2::read::GzDecoder::new(std::io::BufReader::new(file)));
    let entries = tar.entries().map_err(|e| MemberFault::NotTarGz { reason: e.to_string() })?;
    let corrupt = |e: std::io::Error| MemberFault::Corrupt { reason: e.to_string() };
    for entry in entries {
        let entry = entry.map_err(corrupt)?;
        let path = entry.path().map_err(corrupt)?.to_string_lossy().into_owned();
        if normalize_member(&path) == want && entry.header().entry_type().is_file() {
            if let Some(why) = too_large(entry.size(), limit) {
                return Err(why.into());
            }
            let mut out = Vec::new();
            entry.take(limit + 1).read_to_end(&mut out).map_err(corrupt)?;
            return match too_large(out.len() as u64, limit) {
                Some(why) => Err(why.into()),
                None => Ok(out),
            };
        }
    }
    Err(MemberFault::Missing)
}
