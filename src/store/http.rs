//! [`HttpFetcher`]: artifacts over HTTP(S) on the deployer (ureq; TLS by
//! rustls against the system's roots; a proxy per scheme from the
//! environment as curl reads it, else the cluster's `proxy.*`). A download goes into a
//! partial file named by its URL, kept across attempts and runs: a cut
//! transfer resumes with a `Range` request where the server allows it
//! (206), and starts over where it does not (200). Transient failures
//! (connection errors, 5xx, 429) are retried with a growing pause; a
//! missing file (4xx) is not. A download is bounded by the caller's
//! limit: one whose `Content-Length` is larger is refused before its body,
//! one that grows past it is cut off and its partial file removed.
//! Verifying the checksum is the caller's (`artifact.rs`), before anything
//! enters the store. Credentials in a URL (`user:password@`) are never
//! printed: every message naming a URL goes through [`scrub`].

use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use ureq::tls::{RootCerts, TlsConfig};

use super::artifact::{too_large, Fetcher, Progress};
use super::Error;

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
    /// for http:// and https:// URLs: each scheme has its own proxy
    http: ureq::Agent,
    https: ureq::Agent,
    partial_dir: PathBuf,
    retry: Retry,
    timeout: Duration,
}

/// Which proxy carries which URLs, as curl picks them: one for http://,
/// one for https://, and the hosts reached directly (NO_PROXY's forms:
/// `host`, `.domain`, `*`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Proxies {
    pub http: Option<String>,
    pub https: Option<String>,
    pub no_proxy: Vec<String>,
}

impl Proxies {
    /// From the environment: `http_proxy`/`HTTP_PROXY` for http, `https_proxy`/`HTTPS_PROXY`
    /// for https, `all_proxy`/`ALL_PROXY` for either when its own is unset; `no_proxy`/`NO_PROXY`.
    pub fn from_env() -> Proxies {
        let var = |names: &[&str]| names.iter().find_map(|n| std::env::var(n).ok().filter(|v| !v.is_empty()));
        Proxies {
            http: var(&["http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY"]),
            https: var(&["https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"]),
            no_proxy: var(&["no_proxy", "NO_PROXY"]).map_or(vec![], |l| split_hosts(&l)),
        }
    }

    pub fn is_none(&self) -> bool {
        self.http.is_none() && self.https.is_none()
    }

    fn proxy(&self, url: &Option<String>) -> Result<Option<ureq::Proxy>, Error> {
        let Some(url) = url else { return Ok(None) };
        let bad = |e: ureq::Error| Error::Proxy { url: url.clone(), reason: e.to_string() };
        let given = ureq::Proxy::new(url).map_err(bad)?;
        let mut b = ureq::Proxy::builder(given.protocol()).host(given.host()).port(given.port());
        if let Some(u) = given.username() {
            b = b.username(u);
        }
        if let Some(pw) = given.password() {
            b = b.password(pw);
        }
        for host in &self.no_proxy {
            b = b.no_proxy(host);
        }
        b.build().map(Some).map_err(bad)
    }
}

/// The `user:password` of a URL's authority (`scheme://user:password@host/…`),
/// if it has one.
pub fn credentials(url: &str) -> Option<&str> {
    let (_, rest) = url.split_once("://")?;
    let authority = &rest[..rest.find(['/', '?', '#']).unwrap_or(rest.len())];
    authority.rfind('@').map(|at| &authority[..at])
}

/// `url` with its credentials replaced by `***`.
pub fn redact(url: &str) -> String {
    match credentials(url) {
        Some(c) => url.replacen(&format!("{c}@"), "***@", 1),
        None => url.to_string(),
    }
}

/// `text` (a message about `url`) with `url`'s credentials taken out,
/// wherever they appear in it.
pub fn scrub(text: &str, url: &str) -> String {
    let Some(c) = credentials(url).filter(|c| !c.is_empty()) else { return text.to_string() };
    let mut out = text.replace(&format!("{c}@"), "***@").replace(c, "***");
    if let Some((_, password)) = c.split_once(':').filter(|(_, p)| !p.is_empty()) {
        out = out.replace(password, "***");
    }
    out
}

/// A comma-separated host list as NO_PROXY writes it.
pub fn split_hosts(list: &str) -> Vec<String> {
    list.split(',').map(str::trim).filter(|h| !h.is_empty()).map(str::to_string).collect()
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
        let env = Proxies::from_env();
        // a malformed proxy variable is ignored, as curl and ureq do
        let (http, https) = (env.proxy(&env.http).unwrap_or(None), env.proxy(&env.https).unwrap_or(None));
        HttpFetcher {
            http: agent(timeout, http),
            https: agent(timeout, https),
            partial_dir: partial_dir.into(),
            retry,
            timeout,
        }
    }

    /// This fetcher going through the cluster's proxies, unless the
    /// environment names one (it describes the deployer's network best).
    pub fn with_cluster_proxies(self, p: &Proxies) -> Result<HttpFetcher, Error> {
        if !Proxies::from_env().is_none() {
            return Ok(self);
        }
        Ok(HttpFetcher {
            http: agent(self.timeout, p.proxy(&p.http)?),
            https: agent(self.timeout, p.proxy(&p.https)?),
            ..self
        })
    }

    fn partial_path(&self, url: &str) -> PathBuf {
        self.partial_dir.join(format!("{}.part", &blake3::hash(url.as_bytes()).to_hex()[..32]))
    }

    /// Download `url` into `part`, resuming what is there, at most `limit`
    /// bytes in all.
    fn attempt(&self, url: &str, part: &Path, limit: u64, progress: Progress) -> Result<(), Failed> {
        let have = std::fs::metadata(part).map_or(0, |m| m.len());
        // the bytes as the server keeps them: the checksum is of the file, not of a
        // re-encoding (a .tar.gz served with Content-Encoding: gzip stays as it is)
        let agent = if url.starts_with("https://") { &self.https } else { &self.http };
        let mut req = agent.get(url).header("Accept-Encoding", "identity");
        if have > 0 {
            req = req.header("Range", format!("bytes={have}-"));
        }
        let resp = req.call().map_err(|e| Failed { transient: is_transient(&e), reason: e.to_string() })?;
        let status = resp.status().as_u16();
        let append = match status {
            200 => false,
            // only a continuation from where the partial file ends is appended
            206 if range_start(&resp) == Some(have) => true,
            206 => {
                let _ = std::fs::remove_file(part);
                return Err(Failed { reason: "the server resumed at another offset".into(), transient: true });
            }
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
        let refuse = |why: String| {
            let _ = std::fs::remove_file(part);
            Failed { reason: why, transient: false }
        };
        if let Some(why) = total.and_then(|t| too_large(t, limit)) {
            return Err(refuse(format!("the server announces {why}")));
        }
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
            if have + n as u64 > limit {
                return Err(refuse(format!(
                    "more than {limit} bytes, the download limit (--max-download or KDEPLOY_MAX_DOWNLOAD raises it)"
                )));
            }
            out.write_all(&buf[..n]).map_err(io)?;
            have += n as u64;
            progress(have, total);
        }
        out.sync_all().map_err(io)
    }
}

/// Where a 206 answer's `Content-Range: bytes START-END/TOTAL` starts.
fn range_start(resp: &ureq::http::Response<ureq::Body>) -> Option<u64> {
    let v = resp.headers().get("content-range")?.to_str().ok()?;
    v.strip_prefix("bytes ")?.split('-').next()?.trim().parse().ok()
}

/// Whether another attempt may succeed: not when the name does not
/// resolve, the URL is malformed or TLS refuses the server.
fn is_transient(e: &ureq::Error) -> bool {
    !matches!(
        e,
        ureq::Error::HostNotFound
            | ureq::Error::BadUri(_)
            | ureq::Error::Tls(_)
            | ureq::Error::Rustls(_)
            | ureq::Error::InvalidProxyUrl
    )
}

pub(super) fn agent(timeout: Duration, proxy: Option<ureq::Proxy>) -> ureq::Agent {
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
    fn fetch(&self, url: &str, limit: u64, progress: Progress) -> Result<Option<PathBuf>, Error> {
        if !(url.starts_with("http://") || url.starts_with("https://")) {
            return Ok(None);
        }
        std::fs::create_dir_all(&self.partial_dir).map_err(|e| Error::Io {
            what: "cannot create",
            path: self.partial_dir.clone(),
            reason: e.to_string(),
        })?;
        let part = self.partial_path(url);
        let mut pause = self.retry.first_pause;
        let mut last = String::new();
        for n in 1..=self.retry.attempts.max(1) {
            match self.attempt(url, &part, limit, progress) {
                Ok(()) => return Ok(Some(part)),
                Err(f) if !f.transient => {
                    return Err(Error::Download { reason: scrub(&f.reason, url), attempts: None })
                }
                Err(f) => {
                    last = f.reason;
                    if n < self.retry.attempts {
                        std::thread::sleep(pause);
                        pause *= 2;
                    }
                }
            }
        }
        Err(Error::Download { reason: scrub(&last, url), attempts: Some(self.retry.attempts) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_are_found_and_kept_out_of_messages() {
        let url = "https://kd:s3cr3t@mirror.example:8443/files/etcd.tar.gz";
        assert_eq!(credentials(url), Some("kd:s3cr3t"));
        assert_eq!(redact(url), "https://***@mirror.example:8443/files/etcd.tar.gz");
        let said = format!("cannot fetch {url}: Basic a2Q6czNjcjN0 refused for kd:s3cr3t, password s3cr3t");
        let clean = scrub(&said, url);
        assert!(!clean.contains("s3cr3t") && clean.contains("https://***@mirror.example"), "{clean}");
        for plain in ["https://mirror.example/a@b", "http://10.0.0.5:8080/cache", "file:///opt/x"] {
            assert_eq!(credentials(plain), None, "{plain}");
            assert_eq!(redact(plain), plain);
        }
        assert_eq!(credentials("http://token@host/x"), Some("token"));
    }
}
