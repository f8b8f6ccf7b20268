//! Pushing blobs and staging phases on one node, before anything goes
//! live. The node is asked which blobs it lacks with what the deployer
//! knows of each — its size, and its sha256 when that is cheap to check
//! (blobs up to [`HASH_CHECKED_UP_TO`]) — so a blob truncated or altered
//! on the node counts as missing and is sent again rather than staged.
//! Blobs are streamed from their files in chunks, so memory stays flat
//! however large the binaries are; each blob is resolved once per run and
//! shared by every node that needs it. With a binary cache
//! (`transfer.cache`), each missing blob other than a secret is uploaded
//! to it once per run and the nodes fetch it from there themselves, so
//! the deployer's uplink carries one copy however many nodes need it; what
//! a node cannot fetch is sent over SSH as before.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;

use tokio::sync::OnceCell;

use super::events::{Event, Sink};
use super::plan::NodeWork;
use super::step::Fail;
use crate::closure::Source;
use crate::node::{Node, WantedBlob};
use crate::store::cache::{BinaryCache, Upload};
use crate::store::{Digest, Readable, Resolver};

/// Blobs up to this size are checked by sha256 on the node when reused
/// (a node reads them in milliseconds); larger ones (binaries of tens of
/// MB, which every changed node would re-read on every run) by size.
pub const HASH_CHECKED_UP_TO: u64 = 4 << 20;

/// A blob ready to send: where its bytes are, their size, whether it is a
/// secret (which travels outside the blob store and is checked by length:
/// even an unkeyed hash of it must not reach a node's command line) and
/// its sha256, computed when first needed; whether it reached the binary
/// cache, tried once per run.
pub struct BlobSource {
    readable: Readable,
    size: u64,
    secret: bool,
    sha256: OnceLock<String>,
    uploaded: OnceCell<Result<Upload, String>>,
}

impl BlobSource {
    fn sha256(&self) -> Result<&str, String> {
        if let Some(s) = self.sha256.get() {
            return Ok(s);
        }
        let s = self.readable.sha256().map_err(|e| e.0)?;
        Ok(self.sha256.get_or_init(|| s))
    }

    /// What `have` checks the node's copy against.
    fn wanted(&self, hash: Digest) -> Result<WantedBlob, String> {
        let sha256 = match self.secret || self.size > HASH_CHECKED_UP_TO {
            true => None,
            false => Some(self.sha256()?.to_string()),
        };
        Ok(WantedBlob { hash, size: self.size, sha256 })
    }
}

/// Where one run's blobs come from: the resolver, the blobs already
/// resolved (by hash), and the binary cache if the cluster names one.
pub struct Blobs<'a> {
    pub resolver: &'a Resolver,
    pub cache: Option<Arc<BinaryCache>>,
    resolved: Mutex<HashMap<Digest, Arc<BlobSource>>>,
}

impl<'a> Blobs<'a> {
    pub fn new(resolver: &'a Resolver, cache: Option<Arc<BinaryCache>>) -> Blobs<'a> {
        Blobs { resolver, cache, resolved: Mutex::new(HashMap::new()) }
    }

    fn source(&self, d: &Digest, s: &Source) -> Result<Arc<BlobSource>, String> {
        blob_source(&self.resolved, self.resolver, d, s)
    }
}

fn blob_source(
    cache: &Mutex<HashMap<Digest, Arc<BlobSource>>>,
    resolver: &Resolver,
    d: &Digest,
    s: &Source,
) -> Result<Arc<BlobSource>, String> {
    if let Some(b) = cache.lock().unwrap_or_else(|p| p.into_inner()).get(d) {
        return Ok(b.clone());
    }
    let secret = matches!(s, Source::Secret(_));
    // an artifact member already extracted into the store is read from there
    let readable = match resolver.store().has(d) && !secret {
        true => Readable::Path(resolver.store().blob_path(d)),
        false => resolver.readable(s).map_err(|e| e.0)?,
    };
    let size = match &readable {
        Readable::Bytes(b) => b.len() as u64,
        Readable::Path(p) => std::fs::metadata(p).map_err(|e| format!("{}: {e}", p.display()))?.len(),
    };
    let b = Arc::new(BlobSource { readable, size, secret, sha256: OnceLock::new(), uploaded: OnceCell::new() });
    cache.lock().unwrap_or_else(|p| p.into_inner()).insert(*d, b.clone());
    Ok(b)
}

/// Streams one blob to a node; the number of bytes sent.
async fn send_blob(node: &Node<'_>, d: &Digest, blob: &BlobSource) -> Result<u64, String> {
    match (&blob.readable, blob.secret) {
        (Readable::Bytes(b), true) => node.put_secret(d, b).await.map_err(|e| e.to_string())?,
        (Readable::Path(_), true) => return Err(format!("secret {d} must be sent from memory")),
        (Readable::Bytes(b), false) => node.put_bytes(d, blob.sha256()?, b).await.map_err(|e| e.to_string())?,
        (Readable::Path(p), false) => {
            let mut f = std::fs::File::open(p).map_err(|e| format!("{}: {e}", p.display()))?;
            node.put(d, blob.sha256()?, &mut f).await.map_err(|e| e.to_string())?
        }
    }
    Ok(blob.size)
}

/// Put `blob` into the binary cache unless this run already did (every
/// node needing it waits for the one upload); the bytes sent, 0 when the
/// cache held it.
async fn upload_once(
    cache: &Arc<BinaryCache>,
    d: Digest,
    blob: &Arc<BlobSource>,
    sink: &dyn Sink,
) -> Result<u64, String> {
    let r = blob
        .uploaded
        .get_or_init(|| {
            let (cache, blob) = (cache.clone(), blob.clone());
            async move {
                let t0 = Instant::now();
                let r = tokio::task::spawn_blocking(move || cache.ensure(&d, &blob.readable, blob.size))
                    .await
                    .unwrap_or_else(|e| Err(format!("uploading {d}: {e}")));
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
            Ok(_) => lines.push((d, b.sha256().map_err(|e| Fail::msg(None, e))?.to_string())),
            Err(e) => {
                sink.emit(Event::Warning { node: w.name.clone(), message: format!("{e}; sending it over SSH") });
                direct.push(d);
            }
        }
    }
    if lines.is_empty() {
        return Ok((direct, 0, 0));
    }
    let asked: Vec<(Digest, &str)> = lines.iter().map(|(d, s)| (*d, s.as_str())).collect();
    let (failed, why) = node.fetch(cache.base(), &asked).await.map_err(|e| Fail::msg(None, e.to_string()))?;
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
/// cache where there is one, then stage its new phases.
pub async fn push_and_stage(node: &Node<'_>, w: &NodeWork, blobs: &Blobs<'_>, sink: &dyn Sink) -> Result<(), Fail> {
    let t0 = Instant::now();
    let mut sources = HashMap::new();
    let mut wanted = Vec::new();
    for (d, s) in &w.push {
        let b = blobs.source(d, s).map_err(|e| Fail::msg(None, e))?;
        wanted.push(b.wanted(*d).map_err(|e| Fail::msg(None, e))?);
        sources.insert(*d, b);
    }
    let missing = node.missing(&wanted).await.map_err(|e| Fail::msg(None, e.to_string()))?;
    if let Some(d) = missing.iter().find(|d| !sources.contains_key(d)) {
        return Err(Fail::msg(None, format!("the node asked for blob {d}, never offered")));
    }
    let (direct, fetched, fetched_bytes) = match &blobs.cache {
        Some(cache) => fetch_from_cache(node, w, cache, missing, &sources, sink).await?,
        None => (missing, 0, 0),
    };
    let mut bytes = 0u64;
    for d in &direct {
        bytes += send_blob(node, d, &sources[d]).await.map_err(|e| Fail::msg(None, e))?;
    }
    for (phase, m) in &w.stage {
        node.stage(w.stage_generation, phase, m).await.map_err(|e| Fail::msg(Some(phase), e.to_string()))?;
    }
    sink.emit(Event::BlobsPushed {
        node: w.name.clone(),
        count: direct.len(),
        bytes,
        fetched,
        fetched_bytes,
        took: t0.elapsed(),
    });
    Ok(())
}
