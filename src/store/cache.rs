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
        let shown = super::http::redact(base);
        if !(base.starts_with("http://") || base.starts_with("https://")) {
            return Err(format!("transfer.cache {shown}: not an http:// or https:// URL"));
        }
        if super::http::credentials(base).is_some() {
            return Err(format!(
                "transfer.cache {shown}: credentials in the URL would sit in every node's process list; \
                 restrict the cache by address instead (nodes and the deployer reach it directly)"
            ));
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
        if self.size_of(&self.url(d))? == Some(size) {
            return Ok(Upload::Present);
        }
        self.replace(d, blob, size)
    }

    /// Put `blob` (of `size` bytes) under `d`, whatever the cache holds
    /// there (a copy a node refused). Blocking.
    pub fn replace(&self, d: &Digest, blob: &Readable, size: u64) -> Result<Upload, String> {
        let url = self.url(d);
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
