//! [`HttpFetcher`]: artifacts over HTTP(S) on the deployer (ureq; TLS by
//! rustls against the system's roots; proxies from `HTTPS_PROXY`,
//! `HTTP_PROXY`, `ALL_PROXY` and `NO_PROXY`, else the cluster's `proxy.*`). A download goes into a
//! partial file named by its URL, kept across attempts and runs: a cut
//! transfer resumes with a `Range` request where the server allows it
//! (206), and starts over where it does not (200). Transient failures
//! (connection errors, 5xx, 429) are retried with a growing pause; a
//! missing file (4xx) is not. Verifying the checksum is the caller's
//! (`artifact.rs`), before anything enters the store.

use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use ureq::tls::{RootCerts, TlsConfig};

use super::artifact::{Fetcher, FileFetcher, Progress};

/// How a failed attempt is retried: this many attempts in all, the pause
/// doubling from `first_pause`.
#[derive(Debug, Clone, Copy)]
pub struct Retry {
    pub attempts: u32,
    pub first_pause: Duration,
}

impl Default for Retry {
    fn default() -> Self {
        Retry { attempts: 5, first_pause: Duration::from_millis(500) }
    }
}

pub struct HttpFetcher {
    agent: ureq::Agent,
    partial_dir: PathBuf,
    retry: Retry,
    timeout: Duration,
}

/// The proxy a cluster names for its downloads (`proxy.https`, else
/// `proxy.http`; `proxy.noProxy`), used when the deployer's environment
/// names none: the deployer's own environment describes its network best.
#[derive(Debug, Clone, PartialEq)]
pub struct ClusterProxy {
    pub url: String,
    /// Hosts not to reach through it (NO_PROXY's forms: `host`, `.domain`, `*`).
    pub no_proxy: Vec<String>,
}

/// Why one attempt failed, and whether another may succeed.
struct Failed {
    reason: String,
    transient: bool,
}

impl HttpFetcher {
    /// Partial downloads live in `partial_dir` (made when first needed).
    /// `timeout`: how long a connection, an answer, or the next bytes of a
    /// body may keep us waiting before the attempt counts as failed (an
    /// idle limit, as Ansible's get_url has, not a limit on the transfer).
    pub fn new(partial_dir: impl Into<PathBuf>, retry: Retry, timeout: Duration) -> HttpFetcher {
        let agent = agent(timeout, ureq::Proxy::try_from_env());
        HttpFetcher { agent, partial_dir: partial_dir.into(), retry, timeout }
    }

    /// This fetcher going through the cluster's proxy, unless the
    /// environment names one (HTTPS_PROXY, HTTP_PROXY, ALL_PROXY win).
    pub fn with_cluster_proxy(self, p: &ClusterProxy) -> Result<HttpFetcher, String> {
        if ureq::Proxy::try_from_env().is_some() {
            return Ok(self);
        }
        let bad = |e: ureq::Error| format!("proxy {}: {e}", p.url);
        let given = ureq::Proxy::new(&p.url).map_err(bad)?;
        let mut b = ureq::Proxy::builder(given.protocol()).host(given.host()).port(given.port());
        if let Some(u) = given.username() {
            b = b.username(u);
        }
        if let Some(pw) = given.password() {
            b = b.password(pw);
        }
        for host in &p.no_proxy {
            b = b.no_proxy(host);
        }
        let proxy = b.build().map_err(bad)?;
        Ok(HttpFetcher { agent: agent(self.timeout, Some(proxy)), ..self })
    }

    fn partial_path(&self, url: &str) -> PathBuf {
        self.partial_dir.join(format!("{}.part", &blake3::hash(url.as_bytes()).to_hex()[..32]))
    }

    /// Download `url` into `part`, resuming what is there.
    fn attempt(&self, url: &str, part: &Path, progress: Progress) -> Result<(), Failed> {
        let have = std::fs::metadata(part).map_or(0, |m| m.len());
        let mut req = self.agent.get(url);
        if have > 0 {
            req = req.header("Range", format!("bytes={have}-"));
        }
        let resp = req.call().map_err(|e| Failed { reason: e.to_string(), transient: true })?;
        let status = resp.status().as_u16();
        let append = match status {
            200 => false,
            206 => true,
            // asked for the bytes past a complete file
            416 if have > 0 => return Ok(()),
            _ => {
                let transient = status >= 500 || status == 429 || status == 408;
                let reason = format!("HTTP {status} {}", resp.status().canonical_reason().unwrap_or(""));
                return Err(Failed { reason: reason.trim_end().to_string(), transient });
            }
        };
        let mut have = if append { have } else { 0 };
        let total = resp.body().content_length().map(|n| n + have);
        progress(have, total);
        let io = |e: std::io::Error| Failed { reason: format!("{}: {e}", part.display()), transient: false };
        let mut out = if append {
            OpenOptions::new().append(true).open(part).map_err(io)?
        } else {
            File::create(part).map_err(io)?
        };
        let mut body = resp.into_body().into_reader();
        let mut buf = vec![0u8; 256 * 1024];
        loop {
            let n =
                body.read(&mut buf).map_err(|e| Failed { reason: format!("transfer cut: {e}"), transient: true })?;
            if n == 0 {
                break;
            }
            out.write_all(&buf[..n]).map_err(io)?;
            have += n as u64;
            progress(have, total);
        }
        out.sync_all().map_err(io)
    }
}

fn agent(timeout: Duration, proxy: Option<ureq::Proxy>) -> ureq::Agent {
    ureq::Agent::config_builder()
        .tls_config(TlsConfig::builder().root_certs(RootCerts::PlatformVerifier).build())
        .proxy(proxy)
        .timeout_connect(Some(timeout))
        .timeout_recv_response(Some(timeout))
        .timeout_per_read(Some(timeout))
        .http_status_as_error(false)
        .user_agent(concat!("kdeploy/", env!("CARGO_PKG_VERSION")))
        .build()
        .into()
}

impl Fetcher for HttpFetcher {
    fn fetch(&self, url: &str, progress: Progress) -> Result<Option<Vec<u8>>, String> {
        if !(url.starts_with("http://") || url.starts_with("https://")) {
            return FileFetcher.fetch(url, progress);
        }
        std::fs::create_dir_all(&self.partial_dir).map_err(|e| format!("{}: {e}", self.partial_dir.display()))?;
        let part = self.partial_path(url);
        let mut pause = self.retry.first_pause;
        let mut last = String::new();
        for n in 1..=self.retry.attempts.max(1) {
            match self.attempt(url, &part, progress) {
                Ok(()) => {
                    let bytes = std::fs::read(&part).map_err(|e| format!("{}: {e}", part.display()))?;
                    // the caller verifies; a mismatch must not resume from these bytes
                    let _ = std::fs::remove_file(&part);
                    return Ok(Some(bytes));
                }
                Err(f) if !f.transient => return Err(f.reason),
                Err(f) => {
                    last = f.reason;
                    if n < self.retry.attempts {
                        std::thread::sleep(pause);
                        pause *= 2;
                    }
                }
            }
        }
        Err(format!("{last} (after {} attempts)", self.retry.attempts))
    }
}
