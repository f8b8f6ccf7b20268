//! Pushing blobs and staging phases on one node, before anything goes
//! live. The node is asked which blobs it lacks with what the deployer
//! knows of each — its size, and its sha256 when that is cheap to check
//! (blobs up to [`HASH_CHECKED_UP_TO`]) — so a blob truncated or altered
//! on the node counts as missing and is sent again rather than staged.
//! Blobs are streamed from their files in chunks, so memory stays flat
//! however large the binaries are; each blob is resolved once per run and
//! shared by every node that needs it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;

use super::events::{Event, Sink};
use super::plan::NodeWork;
use super::step::Fail;
use crate::closure::Source;
use crate::node::{Node, WantedBlob};
use crate::store::{Digest, Readable, Resolver};

/// Blobs up to this size are checked by sha256 on the node when reused
/// (a node reads them in milliseconds); larger ones (binaries of tens of
/// MB, which every changed node would re-read on every run) by size.
pub const HASH_CHECKED_UP_TO: u64 = 4 << 20;

/// A blob ready to send: where its bytes are, their size, whether it is a
/// secret (which travels outside the blob store and is checked by length:
/// even an unkeyed hash of it must not reach a node's command line) and
/// its sha256, computed when first needed.
pub struct BlobSource {
    readable: Readable,
    size: u64,
    secret: bool,
    sha256: OnceLock<String>,
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

/// Resolved blobs of one run, by hash.
pub type BlobCache = Mutex<HashMap<Digest, Arc<BlobSource>>>;

fn blob_source(cache: &BlobCache, resolver: &Resolver, d: &Digest, s: &Source) -> Result<Arc<BlobSource>, String> {
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
    let b = Arc::new(BlobSource { readable, size, secret, sha256: OnceLock::new() });
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

/// Send the blobs a node lacks (or holds damaged), then stage its new
/// phases.
pub async fn push_and_stage(
    node: &Node<'_>,
    w: &NodeWork,
    resolver: &Resolver,
    cache: &BlobCache,
    sink: &dyn Sink,
) -> Result<(), Fail> {
    let t0 = Instant::now();
    let mut sources = HashMap::new();
    let mut wanted = Vec::new();
    for (d, s) in &w.push {
        let b = blob_source(cache, resolver, d, s).map_err(|e| Fail::msg(None, e))?;
        wanted.push(b.wanted(*d).map_err(|e| Fail::msg(None, e))?);
        sources.insert(*d, b);
    }
    let missing = node.missing(&wanted).await.map_err(|e| Fail::msg(None, e.to_string()))?;
    let mut bytes = 0u64;
    for d in &missing {
        let b = sources.get(d).ok_or_else(|| Fail::msg(None, format!("the node asked for blob {d}, never offered")))?;
        bytes += send_blob(node, d, b).await.map_err(|e| Fail::msg(None, e))?;
    }
    for (phase, m) in &w.stage {
        node.stage(w.stage_generation, phase, m).await.map_err(|e| Fail::msg(Some(phase), e.to_string()))?;
    }
    sink.emit(Event::BlobsPushed { node: w.name.clone(), count: missing.len(), bytes, took: t0.elapsed() });
    Ok(())
}
