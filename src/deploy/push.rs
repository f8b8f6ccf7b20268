//! Pushing blobs to one node, then staging its phases, before anything
//! goes live. The node is asked which blobs it lacks with what the deployer
//! knows of each — its size, and its sha256 when that is cheap to check
//! (blobs up to [`HASH_CHECKED_UP_TO`]) — so a blob truncated or altered
//! on the node counts as missing and is sent again rather than staged.
//! A node's missing blobs go in one stream, one command (`Node::put`),
//! streamed from their files in chunks, so memory stays flat however large
//! the binaries are; each blob is resolved once per run and shared by
//! every node that needs it. Large blobs travel zstd-compressed to nodes
//! that have zstd, compressed once and kept (`store/compressed.rs`). With a binary cache
//! (`transfer.cache`), each missing blob other than a secret is uploaded
//! to it once per run and the nodes fetch it from there themselves, so
//! the deployer's uplink carries one copy however many nodes need it; what
//! a node cannot fetch is sent over SSH as before, and a blob the node
//! refuses (the cache holds other bytes under its name: anyone may PUT
//! there) is put into the cache again, once per run, so a damaged copy is
//! not trusted forever.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;

use tokio::sync::{OnceCell, Semaphore};

use super::bounded;
use super::error::{BlobError, Error};
use super::events::{Event, Sink};
use super::plan::NodeWork;
use super::step::Fail;
use crate::closure::Source;
use crate::node::{self, Body, Manifest, Node, PutBlob, WantedBlob};
use crate::store::cache::{BinaryCache, Upload};
use crate::store::compressed::Chunks;
use crate::store::sha256_of;
use crate::store::{Digest, Readable, Resolver, Store};

/// Blobs up to this size are checked by sha256 on the node when reused
/// (a node reads them in milliseconds); larger ones (binaries of tens of
/// MB, which every changed node would re-read on every run) by size.
pub const HASH_CHECKED_UP_TO: u64 = 4 << 20;

/// Blobs from this size up are sent zstd-compressed to nodes that have
/// zstd (when it shrinks them by a tenth): binaries, archives of images;
/// below it the saving is not worth a compressor's start.
const COMPRESS_FROM: u64 = 1 << 20;

/// A blob ready to send: where its bytes are, their size, whether it is a
/// secret (which travels outside the blob store and is checked by length:
/// even an unkeyed hash of it must not reach a node's command line) and
/// its sha256, computed when first needed; whether it reached the binary
/// cache, tried once per run.
pub struct BlobSource {
    /// Its name (a secret's keyed hash), and the store that keeps its
    /// sha256.
    digest: Digest,
    store: Store,
    readable: Readable,
    size: u64,
    secret: bool,
    sha256: OnceCell<Result<String, BlobError>>,
    /// Its sha256 worked out from its bytes again, its record dropped,
    /// after a node refused a stream sent with the recorded one.
    rechecked: OnceCell<Result<String, BlobError>>,
    uploaded: OnceCell<Result<Upload, BlobError>>,
    /// Put into the cache again after a node refused the cache's copy
    /// (once per run).
    replaced: OnceCell<Result<Upload, BlobError>>,
    /// Its chunks for a compressed transfer (a [`compressible`] blob),
    /// opened the first time a node can take them; compressed ones are
    /// kept in the deployer's store for later runs.
    chunks: OnceLock<Arc<Chunks>>,
}

impl BlobSource {
    /// Its sha256, worked out once however many nodes ask at the same time
    /// (the binaries are hundreds of MB: hashed off the async workers), and
    /// kept in the store for a blob read from a file (`sha256_of`).
    async fn sha256(self: &Arc<Self>) -> Result<&str, BlobError> {
        let b = self.clone();
        let r = self.sha256.get_or_init(|| async move { hashing(move || b.sha256_from_file()).await }).await;
        r.as_deref().map_err(Clone::clone)
    }

    /// Its sha256 worked out again from the file, not taken from its
    /// record (which is dropped, and made anew): once per run.
    async fn sha256_anew(self: &Arc<Self>) -> Result<&str, BlobError> {
        if !has_record(self) {
            return self.sha256().await;
        }
        let b = self.clone();
        let r = self
            .rechecked
            .get_or_init(|| async move {
                let work = move || {
                    sha256_of::forget(&b.store, &b.digest);
                    b.sha256_from_file()
                };
                hashing(work).await
            })
            .await;
        r.as_deref().map_err(Clone::clone)
    }

    /// Its sha256 from its record, else from its bytes.
    fn sha256_from_file(&self) -> Result<String, BlobError> {
        match &self.readable {
            Readable::Path(p) if !self.secret => Ok(sha256_of::sha256_of(&self.store, &self.digest, p)?),
            r => Ok(r.sha256()?),
        }
    }

    /// Its sha256 as `put` sends it: [`BlobSource::sha256`], or for
    /// `Anew` [`BlobSource::sha256_anew`].
    async fn sha256_as(self: &Arc<Self>, sha256: Sha256) -> Result<&str, BlobError> {
        match sha256 {
            Sha256::AsRecorded => self.sha256().await,
            Sha256::Anew => self.sha256_anew().await,
        }
    }

    /// [`BlobSource::sha256_as`], if it has been worked out.
    fn sha256_ready(&self, sha256: Sha256) -> Option<Result<String, String>> {
        let cell = match sha256 {
            Sha256::Anew if has_record(self) => &self.rechecked,
            _ => &self.sha256,
        };
        cell.get().map(|r| r.clone().map_err(|e| e.to_string()))
    }

    /// What `have` checks the node's copy against.
    async fn wanted(self: &Arc<Self>) -> Result<WantedBlob, BlobError> {
        let sha256 = match self.secret || self.size > HASH_CHECKED_UP_TO {
            true => None,
            false => Some(self.sha256().await?.to_string()),
        };
        Ok(WantedBlob { hash: self.digest, size: self.size, sha256 })
    }
}

/// Where one run's blobs come from: the resolver, the blobs already
/// resolved (by hash), and the binary cache if the cluster names one.
pub struct Blobs<'a> {
    pub resolver: &'a Resolver,
    pub cache: Option<Arc<BinaryCache>>,
    resolved: Mutex<HashMap<Digest, Arc<BlobSource>>>,
    /// One permit per node streaming blobs over SSH (`--uploads`).
    uploads: Semaphore,
    /// One permit per blob being compressed: as many as there are CPUs.
    compressing: Semaphore,
    /// One permit per bulk connection made ahead of its upload (as many as
    /// upload slots): at 50 nodes, one each for every node waiting for a
    /// slot had held 50 more connections (peak 64 -> 90 MB).
    ahead: Arc<Semaphore>,
}

impl<'a> Blobs<'a> {
    pub fn new(resolver: &'a Resolver, cache: Option<Arc<BinaryCache>>, uploads: usize) -> Blobs<'a> {
        let width = bounded::uploads_width(uploads);
        let (uploads, ahead) = (Semaphore::new(width), Arc::new(Semaphore::new(width)));
        let compressing = Semaphore::new(bounded::cpus());
        Blobs { resolver, cache, resolved: Mutex::new(HashMap::new()), uploads, compressing, ahead }
    }

    fn source(&self, d: &Digest, s: &Source) -> Result<Arc<BlobSource>, BlobError> {
        blob_source(&self.resolved, self.resolver, d, s)
    }
}

fn blob_source(
    cache: &Mutex<HashMap<Digest, Arc<BlobSource>>>,
    resolver: &Resolver,
    d: &Digest,
    s: &Source,
) -> Result<Arc<BlobSource>, BlobError> {
    if let Some(b) = cache.lock().unwrap_or_else(|p| p.into_inner()).get(d) {
        return Ok(b.clone());
    }
    let secret = s.is_secret();
    // an artifact member already extracted into the store is read from there
    let readable = match resolver.store().has(d) && !secret {
        true => Readable::Path(resolver.store().blob_path(d)),
        false => resolver.readable(s)?,
    };
    let size = match &readable {
        Readable::Bytes(b) => b.len() as u64,
        Readable::Path(p) => {
            std::fs::metadata(p).map_err(|e| BlobError::Size { path: p.clone(), reason: e.to_string() })?.len()
        }
    };
    let b = Arc::new(BlobSource {
        digest: *d,
        store: resolver.store().clone(),
        readable,
        size,
        secret,
        sha256: OnceCell::new(),
        rechecked: OnceCell::new(),
        uploaded: OnceCell::new(),
        replaced: OnceCell::new(),
        chunks: OnceLock::new(),
    });
    cache.lock().unwrap_or_else(|p| p.into_inner()).insert(*d, b.clone());
    Ok(b)
}

/// The file of `blob` if it is worth compressing for the transfer: read
/// from a file (not a secret) of at least [`COMPRESS_FROM`] bytes.
fn compressible(blob: &BlobSource) -> Option<&std::path::Path> {
    match &blob.readable {
        Readable::Path(p) if !blob.secret && blob.size >= COMPRESS_FROM => Some(p),
        _ => None,
    }
}

/// Hash a blob with `work` off the async workers (the binaries are
/// hundreds of MB).
async fn hashing(work: impl FnOnce() -> Result<String, BlobError> + Send + 'static) -> Result<String, BlobError> {
    tokio::task::spawn_blocking(work)
        .await
        .unwrap_or_else(|e| Err(BlobError::Task { what: "hashing a blob".into(), reason: e.to_string() }))
}

/// The chunks of `blob` for a node that can decompress them, if it is
/// [`compressible`].
fn chunks(blob: &BlobSource) -> Option<&Arc<Chunks>> {
    let file = compressible(blob)?;
    Some(blob.chunks.get_or_init(|| Arc::new(Chunks::open(&blob.store, &blob.digest, file, blob.size))))
}

/// Compress the chunks of `squeeze` ahead of a node's stream, in the
/// stream's order, one chunk per CPU permit (shared by every node), until
/// no chunk is left untaken or the stream is `done`.
async fn compress_ahead(blobs: &Blobs<'_>, squeeze: &[Arc<Chunks>], done: &AtomicBool) {
    loop {
        let Ok(_cpu) = blobs.compressing.acquire().await else { return };
        if done.load(Ordering::Relaxed) {
            return;
        }
        let Some((c, i)) = squeeze.iter().find_map(|c| c.claim().map(|i| (c.clone(), i))) else { return };
        let held = c.clone();
        if !on_spare_cpu(move || c.compress(i)).await {
            held.abandon(i);
        }
    }
}

/// Run `work` on a thread of its own at the lowest CPU priority (nice 19),
/// and wait for it; `false` if it did not finish. Compression takes only
/// the CPU nothing else wants: where the streams, SSH and the nodes fill
/// the CPUs (the lab: nodes and deployer on 2 cores), chunks go stored
/// rather than the wire wait for them; where the CPUs are idle beside a
/// slow link, the compressors keep ahead of it at full speed.
async fn on_spare_cpu(work: impl FnOnce() + Send + 'static) -> bool {
    let (tx, rx) = tokio::sync::oneshot::channel();
    let spawned = std::thread::Builder::new().name("kdeploy-zstd".into()).spawn(move || {
        // SAFETY: setpriority on this thread's own id (Linux: per thread);
        // a failure leaves it at the priority it had
        unsafe { libc::setpriority(libc::PRIO_PROCESS, libc::gettid() as libc::id_t, 19) };
        work();
        let _ = tx.send(());
    });
    spawned.is_ok() && rx.await.is_ok()
}

/// Send `direct` to the node over SSH: secrets in one command (into the
/// node's private secrets, checked by length), the rest in one stream through
/// `put`, the large blobs chunk by chunk compressed where the node can take
/// it and it pays. Small blobs go first, then the large ones, largest first;
/// compressors (as many at once as there are CPUs) work on the chunks ahead
/// of the stream, which sends a chunk stored when no compressor has started
/// it, and waits for one being compressed: the wire never idles for the
/// compressor, and a slow wire gets every chunk compressed. A stream the
/// node refuses is sent once more uncompressed, every sha256 worked out
/// anew from the bytes (a damaged compressed chunk or sha256 record in the
/// deployer's store costs a warning, and is dropped to be made again).
/// Returns the blob bytes delivered and the bytes that crossed the wire.
async fn send_blobs(
    node: &Node<'_>,
    w: &NodeWork,
    direct: &[Digest],
    sources: &HashMap<Digest, Arc<BlobSource>>,
    blobs: &Blobs<'_>,
    zstd: bool,
    sink: &dyn Sink,
) -> Result<(u64, u64), Error> {
    let (mut bytes, mut sent) = (0, 0);
    let mut secrets = Vec::new();
    let mut streamed = Vec::new();
    for d in direct {
        let b = &sources[d];
        bytes += b.size;
        if b.secret {
            let Readable::Bytes(s) = &b.readable else { return Err(BlobError::SecretOnDisk(*d).into()) };
            secrets.push((*d, s.as_slice()));
            sent += b.size;
        } else {
            streamed.push(*d);
        }
    }
    let squeezed = |d: &Digest| zstd && compressible(&sources[d]).is_some();
    // the small ones, then the large ones, largest first: the compressors
    // start on the large ones while the small ones go
    streamed.sort_by_key(|d| (squeezed(d), std::cmp::Reverse(sources[d].size)));
    let squeeze: Vec<Digest> = streamed.iter().filter(|d| squeezed(d)).copied().collect();
    let ahead: Vec<Arc<Chunks>> = squeeze.iter().filter_map(|d| chunks(&sources[d]).cloned()).collect();
    let done = AtomicBool::new(false);
    let compressing = futures::future::join_all((0..bounded::cpus()).map(|_| compress_ahead(blobs, &ahead, &done)));
    // the secrets' command beside the stream (each on its own channel)
    let stream = async {
        if streamed.is_empty() {
            return Ok(0);
        }
        let _slot = blobs.uploads.acquire().await.expect("the upload slots are never closed");
        let r = match put(node, &streamed, sources, &squeeze, Sha256::AsRecorded).await {
            Ok(n) => Ok(n),
            Err(e) if !squeeze.is_empty() || streamed.iter().any(|d| has_record(&sources[d])) => {
                done.store(true, Ordering::Relaxed);
                // (what is done first: a warning shows its first line)
                sink.emit(Event::Warning {
                    node: w.name.clone(),
                    message: format!("sending the blobs again uncompressed, their sha256 worked out anew: {e}"),
                });
                ahead.iter().for_each(|c| c.forget());
                put(node, &streamed, sources, &[], Sha256::Anew).await
            }
            Err(e) => Err(e),
        };
        done.store(true, Ordering::Relaxed);
        r
    };
    let (secrets, streamed, _) = tokio::join!(node.put_secrets(&secrets), stream, compressing);
    secrets?;
    Ok((bytes, sent + streamed?))
}

/// Which sha256 a `put` sends with each blob.
#[derive(Clone, Copy)]
enum Sha256 {
    /// As recorded in the deployer's store (worked out the first time).
    AsRecorded,
    /// Worked out from the bytes again, the record made anew: a node
    /// refused the stream, and a wrong record must not be trusted forever.
    Anew,
}

/// Whether the sha256 of `blob` comes from a record in the deployer's
/// store (which may be wrong) rather than from bytes read this run.
fn has_record(blob: &BlobSource) -> bool {
    matches!(blob.readable, Readable::Path(_)) && !blob.secret
}

/// One `put` of `blobs`, those in `squeeze` chunk by chunk (compressed
/// where a compressor got to the chunk first). Each sha256 goes after its
/// blob's body, worked out meanwhile in the stream's order: the first run
/// hashes the binaries (130 MB a node on the lab) while the bytes go, not
/// before the first byte.
async fn put(
    node: &Node<'_>,
    blobs: &[Digest],
    sources: &HashMap<Digest, Arc<BlobSource>>,
    squeeze: &[Digest],
    sha256: Sha256,
) -> Result<u64, Error> {
    let ready: Vec<_> = blobs.iter().map(|d| move || sources[d].sha256_ready(sha256)).collect();
    let mut put = Vec::new();
    for (d, ready) in blobs.iter().zip(&ready) {
        let b = &sources[d];
        let body = match (&b.readable, chunks(b)) {
            (_, Some(c)) if squeeze.contains(d) => Body::Chunked(c),
            (Readable::Path(p), _) => Body::File(p),
            (Readable::Bytes(v), _) => Body::Bytes(v),
        };
        put.push(PutBlob { hash: *d, sha256: node::Sha256::Later(ready), body });
    }
    let hashing = async {
        for d in blobs {
            sources[d].sha256_as(sha256).await?;
        }
        Ok::<_, BlobError>(())
    };
    // (a blob that cannot be hashed also fails the stream: its error is
    // the one that says why)
    let (hashed, sent) = tokio::join!(hashing, node.put(&put));
    hashed?;
    Ok(sent?)
}

/// Put `blob` into the binary cache unless this run already did (every
/// node needing it waits for the one upload); the bytes sent, 0 when the
/// cache held it.
async fn upload_once(
    cache: &Arc<BinaryCache>,
    d: Digest,
    blob: &Arc<BlobSource>,
    sink: &dyn Sink,
) -> Result<u64, BlobError> {
    let r = blob
        .uploaded
        .get_or_init(|| {
            let (cache, blob) = (cache.clone(), blob.clone());
            async move {
                let t0 = Instant::now();
                let r = tokio::task::spawn_blocking(move || cache.ensure(&d, &blob.readable, blob.size))
                    .await
                    .map_err(|e| uploading(d, e))
                    .and_then(|r| Ok(r?));
                if let Ok(Upload::Sent(bytes)) = r {
                    sink.emit(Event::CacheUploaded { blob: d.hex(), bytes, took: t0.elapsed() });
                }
                r
            }
        })
        .await;
    match r {
        Ok(Upload::Sent(n)) => Ok(*n),
        Ok(Upload::Present) => Ok(0),
        Err(e) => Err(e.clone()),
    }
}

/// An upload whose blocking task did not finish.
fn uploading(d: Digest, e: tokio::task::JoinError) -> BlobError {
    BlobError::Task { what: format!("uploading {d}"), reason: e.to_string() }
}

/// Put `blob` into the binary cache again, whatever the cache holds under
/// its name (a node refused that copy); once per run however many nodes
/// refuse it.
async fn replace_once(cache: &Arc<BinaryCache>, d: Digest, blob: &Arc<BlobSource>) -> Result<(), BlobError> {
    let r = blob
        .replaced
        .get_or_init(|| {
            let (cache, blob) = (cache.clone(), blob.clone());
            async move {
                tokio::task::spawn_blocking(move || cache.replace(&d, &blob.readable, blob.size))
                    .await
                    .map_err(|e| uploading(d, e))
                    .and_then(|r| Ok(r?))
            }
        })
        .await;
    r.as_ref().map(|_| ()).map_err(Clone::clone)
}

/// Have the node fetch from the binary cache what it lacks of `missing`
/// (secrets excepted); returns what is left to send over SSH, and the
/// count and bytes the node fetched. A cache that cannot take or give a
/// blob costs a warning, not the run.
async fn fetch_from_cache(
    node: &Node<'_>,
    w: &NodeWork,
    cache: &Arc<BinaryCache>,
    missing: Vec<Digest>,
    sources: &HashMap<Digest, Arc<BlobSource>>,
    sink: &dyn Sink,
) -> Result<(Vec<Digest>, usize, u64), Fail> {
    let (cacheable, mut direct): (Vec<Digest>, Vec<Digest>) = missing.into_iter().partition(|d| !sources[d].secret);
    let mut lines = Vec::new();
    for d in cacheable {
        let b = &sources[&d];
        match upload_once(cache, d, b, sink).await {
            Ok(_) => lines.push((d, b.sha256().await.map_err(|e| Fail::msg(None, e))?.to_string())),
            Err(e) => {
                sink.emit(Event::Warning { node: w.name.clone(), message: format!("{e}; sending it over SSH") });
                direct.push(d);
            }
        }
    }
    if lines.is_empty() {
        return Ok((direct, 0, 0));
    }
    let asked: Vec<(Digest, &str, u64)> = lines.iter().map(|(d, s)| (*d, s.as_str(), sources[d].size)).collect();
    let not = node.fetch(cache.base(), &asked).await.map_err(|e| Fail::msg(None, e.to_string()))?;
    let (failed, why) = (not.failed, not.why);
    for d in &not.rejected {
        let message = match replace_once(cache, *d, &sources[d]).await {
            Ok(()) => format!("the cache held a damaged copy of blob {d}: put it into the cache again"),
            Err(e) => format!("the cache held a damaged copy of blob {d}, and putting it there again failed: {e}"),
        };
        sink.emit(Event::Warning { node: w.name.clone(), message });
    }
    if !failed.is_empty() {
        sink.emit(Event::Warning {
            node: w.name.clone(),
            message: format!(
                "could not fetch {} blob(s) from the cache {}, sending them over SSH: {why}",
                failed.len(),
                cache.base()
            ),
        });
    }
    let fetched: Vec<&Digest> = lines.iter().map(|(d, _)| d).filter(|d| !failed.contains(d)).collect();
    let bytes = fetched.iter().map(|d| sources[*d].size).sum();
    let count = fetched.len();
    direct.extend(failed);
    Ok((direct, count, bytes))
}

/// Send the blobs a node lacks (or holds damaged), through the binary
/// cache where there is one. `zstd`: the node can decompress what it is
/// sent. Staging is [`stage`], once every node has its bytes.
pub async fn push(node: &Node<'_>, zstd: bool, w: &NodeWork, blobs: &Blobs<'_>, sink: &dyn Sink) -> Result<(), Fail> {
    let t0 = Instant::now();
    let mut sources = HashMap::new();
    let mut wanted = Vec::new();
    for (d, s) in &w.push {
        let b = blobs.source(d, s).map_err(|e| Fail::msg(None, e))?;
        wanted.push(b.wanted().await.map_err(|e| Fail::msg(None, e))?);
        sources.insert(*d, b);
    }
    // A node's first generation: its store is empty, everything goes; the
    // bulk upload's connection is made beside `have` (a handshake is a
    // tenth of a first push on the lab), else once `have` has said so --
    // by as many nodes at once as there are upload slots (held until this
    // push ends); the others connect when their upload starts.
    let mut ahead = None;
    let expect_bulk = |ahead: &mut Option<_>| {
        if ahead.is_none() {
            *ahead = blobs.ahead.clone().try_acquire_owned().ok();
            if ahead.is_some() {
                node.expect_bulk();
            }
        }
    };
    if w.stage_generation == 1 && blobs.cache.is_none() {
        expect_bulk(&mut ahead);
    }
    let missing = node.missing(&wanted).await.map_err(|e| Fail::msg(None, e.to_string()))?;
    if let Some(d) = missing.iter().find(|d| !sources.contains_key(d)) {
        return Err(Fail::msg(None, format!("the node asked for blob {d}, never offered")));
    }
    if blobs.cache.is_none() && missing.iter().map(|d| sources[d].size).sum::<u64>() >= crate::node::BULK_FROM {
        expect_bulk(&mut ahead);
    }
    let (direct, fetched, fetched_bytes) = match &blobs.cache {
        Some(cache) => fetch_from_cache(node, w, cache, missing, &sources, sink).await?,
        None => (missing, 0, 0),
    };
    let (bytes, sent) =
        send_blobs(node, w, &direct, &sources, blobs, zstd, sink).await.map_err(|e| Fail::msg(None, e))?;
    sink.emit(Event::BlobsPushed {
        node: w.name.clone(),
        count: direct.len(),
        bytes,
        sent,
        fetched,
        fetched_bytes,
        took: t0.elapsed(),
    });
    Ok(())
}

/// Stage the node's new phases from blobs it now holds: each file copied
/// into the generation, nothing live changed.
pub async fn stage(node: &Node<'_>, w: &NodeWork, sink: &dyn Sink) -> Result<(), Fail> {
    let t0 = Instant::now();
    let phases: Vec<(&str, &Manifest)> = w.stage.iter().map(|(p, m)| (p.as_str(), m)).collect();
    node.stage_phases(w.stage_generation, &phases).await.map_err(|e| Fail::msg(None, e.to_string()))?;
    sink.emit(Event::Staged {
        node: w.name.clone(),
        phases: w.stage.len(),
        files: w.stage.iter().map(|(_, m)| m.files.len()).sum(),
        took: t0.elapsed(),
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn compression_runs_on_spare_cpu_only() {
        let niceness = Arc::new(Mutex::new(String::new()));
        let seen = niceness.clone();
        let done = on_spare_cpu(move || {
            let stat = std::fs::read_to_string("/proc/thread-self/stat").unwrap_or_default();
            let nice = stat.rsplit(") ").next().and_then(|f| f.split(' ').nth(16)).unwrap_or("").to_string();
            *seen.lock().unwrap() = nice;
        })
        .await;
        assert!(done);
        assert_eq!(*niceness.lock().unwrap(), "19");
        assert!(!on_spare_cpu(|| panic!("a compressor that died")).await, "said not finished");
    }
}
