//! [`BinaryCache`]: the deployer's side of an HTTP binary cache
//! (`transfer.cache`), as Nix's binary caches are served by nginx or S3.
//! A blob lives at `<base>/<blake3 hex>`; the deployer uploads one with an
//! HTTP PUT (an nginx WebDAV location, or any store taking PUTs) after a
//! HEAD finds it absent or of another size, and the nodes fetch it from
//! there and check its sha256 themselves — the cache is trusted for
//! nothing but availability. Secrets never go there. The cache is reached
//! directly, never through `proxy.*`: it sits next to the nodes.

use std::time::Duration;

use super::{Digest, Readable};

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
    pub fn new(base: &str, timeout: Duration) -> Result<BinaryCache, String> {
        if !(base.starts_with("http://") || base.starts_with("https://")) {
            return Err(format!("transfer.cache {base}: not an http:// or https:// URL"));
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
    pub fn ensure(&self, d: &Digest, blob: &Readable, size: u64) -> Result<Upload, String> {
        let url = self.url(d);
        if self.size_of(&url)? == Some(size) {
            return Ok(Upload::Present);
        }
        let put = self.agent.put(&url);
        let resp = match blob {
            Readable::Bytes(b) => put.send(&b[..]),
            Readable::Path(p) => put.send(std::fs::File::open(p).map_err(|e| format!("{}: {e}", p.display()))?),
        }
        .map_err(|e| format!("uploading to the cache {url}: {e}"))?;
        match resp.status().as_u16() {
            200..=299 => Ok(Upload::Sent(size)),
            s => Err(format!("uploading to the cache {url}: the server answered {s} (does it take PUT requests?)")),
        }
    }

    /// The size the cache reports for `url`, `None` when it has nothing there.
    fn size_of(&self, url: &str) -> Result<Option<u64>, String> {
        let resp = self.agent.head(url).call().map_err(|e| format!("asking the cache {url}: {e}"))?;
        match resp.status().as_u16() {
            200 => Ok(resp.headers().get("content-length").and_then(|v| v.to_str().ok()).and_then(|v| v.parse().ok())),
            404 | 410 => Ok(None),
            s => Err(format!("asking the cache {url}: the server answered {s}")),
        }
    }
}
