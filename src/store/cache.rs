//! [`BinaryCache`]: the deployer's side of an HTTP binary cache
//! (`transfer.cache`), as Nix's binary caches are served by nginx or S3.
//! A blob lives at `<base>/<blake3 hex>`; the deployer uploads one with an
//! HTTP PUT (an nginx WebDAV location, or any store taking PUTs) after a
//! HEAD finds it absent or of another size, and the nodes fetch it from
//! there and check its sha256 themselves — the cache is trusted for
//! nothing but availability: a blob a node refuses (anyone may PUT junk of
//! the right size) is put again by the deployer (`deploy/push.rs`).
//! Secrets never go there. The cache is reached directly, never through
//! `proxy.*`: it sits next to the nodes. Its URL holds no credentials: it
//! is handed to every node's `fetch` command line, where any local user
//! could read them.

use std::time::Duration;

use super::{CacheOp, Digest, Error, Readable};

pub struct BinaryCache {
    base: String,
    agent: ureq::Agent,
}

impl std::fmt::Debug for BinaryCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BinaryCache").field("base", &self.base).finish()
    }
}

/// What putting one blob into the cache did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Upload {
    /// The cache already held a blob of this size under its hash.
    Present,
    /// Sent; this many bytes.
    Sent(u64),
}

impl BinaryCache {
    /// A cache at `base` (http:// or https://; a trailing `/` is dropped).
    pub fn new(base: &str, timeout: Duration) -> Result<BinaryCache, Error> {
        let url = super::http::redact(base);
        if !(base.starts_with("http://") || base.starts_with("https://")) {
            return Err(Error::CacheUrl { url });
        }
        if super::http::credentials(base).is_some() {
            return Err(Error::CacheCredentials { url });
        }
        let agent = super::http::agent(timeout, None);
        Ok(BinaryCache { base: base.trim_end_matches('/').to_string(), agent })
    }

    /// Where the nodes find the blobs (the base URL).
    pub fn base(&self) -> &str {
        &self.base
    }

    pub fn url(&self, d: &Digest) -> String {
        format!("{}/{}", self.base, d.hex())
    }

    /// Make sure the cache holds `blob` (of `size` bytes) under `d`.
    /// Blocking: call from a blocking context.
    pub fn ensure(&self, d: &Digest, blob: &Readable, size: u64) -> Result<Upload, Error> {
        if self.size_of(&self.url(d))? == Some(size) {
            return Ok(Upload::Present);
        }
        self.replace(d, blob, size)
    }

    /// Put `blob` (of `size` bytes) under `d`, whatever the cache holds
    /// there (a copy a node refused). Blocking.
    pub fn replace(&self, d: &Digest, blob: &Readable, size: u64) -> Result<Upload, Error> {
        let url = self.url(d);
        let put = self.agent.put(&url);
        let resp = match blob {
            Readable::Bytes(b) => put.send(&b[..]),
            Readable::Path(p) => put.send(std::fs::File::open(p).map_err(|e| Error::Io {
                what: "cannot read",
                path: p.clone(),
                reason: e.to_string(),
            })?),
        }
        .map_err(|e| Error::Cache { op: CacheOp::Upload, url: url.clone(), reason: e.to_string() })?;
        match resp.status().as_u16() {
            200..=299 => Ok(Upload::Sent(size)),
            status => Err(Error::CacheStatus { op: CacheOp::Upload, url, status }),
        }
    }

    /// The size the cache reports for `url`, `None` when it has nothing there.
    fn size_of(&self, url: &str) -> Result<Option<u64>, Error> {
        let resp = self.agent.head(url).call().map_err(|e| Error::Cache {
            op: CacheOp::Ask,
            url: url.to_string(),
            reason: e.to_string(),
        })?;
        match resp.status().as_u16() {
            200 => Ok(resp.headers().get("content-length").and_then(|v| v.to_str().ok()).and_then(|v| v.parse().ok())),
            404 | 410 => Ok(None),
            status => Err(Error::CacheStatus { op: CacheOp::Ask, url: url.to_string(), status }),
        }
    }
}
