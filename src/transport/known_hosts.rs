//! Host key verification against an OpenSSH known_hosts file, decided
//! *before* the real connection: we look the node up ourselves, then tell the
//! SSH client to accept exactly that key (and to negotiate its algorithm).
//! That is what lets us tell "changed key" (refused, naming file and line)
//! from "unknown host" (refused by default; recorded under
//! [`HostKeyPolicy::AcceptNew`]) — the SSH library alone reports both as one
//! opaque failure.
//!
//! russh's parser finds a host's lines (plain, comma lists, `[host]:port`,
//! hashed `|1|salt|hash`); it skips marker lines, which keeps
//! `@cert-authority` keys from passing for host keys but would also ignore
//! `@revoked`, so revocations are read here and win over any other line.
//! Wildcard patterns are not matched: such a host counts as unknown.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use russh::keys::{Algorithm, EcdsaCurve, HashAlg, PublicKey};

use super::Error;

/// How to treat the node's host key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HostKeyPolicy {
    /// The key must be in the file; unknown hosts and changed keys are refused.
    Strict(PathBuf),
    /// Like `Strict`, but an unknown host is accepted and its key appended to
    /// the file (trust on first use). A changed key is still refused.
    AcceptNew(PathBuf),
}

impl HostKeyPolicy {
    pub fn file(&self) -> &Path {
        match self {
            HostKeyPolicy::Strict(p) | HostKeyPolicy::AcceptNew(p) => p,
        }
    }
}

impl Default for HostKeyPolicy {
    /// Strict, against `~/.ssh/known_hosts`.
    fn default() -> Self {
        let home = std::env::var_os("HOME").map(PathBuf::from).unwrap_or_else(|| "/root".into());
        HostKeyPolicy::Strict(home.join(".ssh/known_hosts"))
    }
}

/// The key a node must present, and where it was recorded.
#[derive(Debug, Clone)]
pub struct ExpectedKey {
    pub key: PublicKey,
    /// Line in the known_hosts file (0 when just recorded).
    pub line: usize,
}

impl ExpectedKey {
    /// The key in the base64 form the SSH client wants.
    pub fn base64(&self) -> String {
        let openssh = self.key.to_openssh().unwrap_or_default();
        openssh.split(' ').nth(1).unwrap_or("").to_string()
    }

    /// Host key algorithms to offer so the server presents *this* key.
    pub fn algorithms(&self) -> Vec<Algorithm> {
        match self.key.algorithm() {
            Algorithm::Rsa { .. } => vec![
                Algorithm::Rsa { hash: Some(HashAlg::Sha512) },
                Algorithm::Rsa { hash: Some(HashAlg::Sha256) },
                Algorithm::Rsa { hash: None },
            ],
            other => vec![other],
        }
    }
}

/// Find the recorded key of `names` (tried in order: the address connected
/// to, then the node's name) at `port`. `Ok(None)`: not in the file.
/// When the host has several keys, the one of the algorithm OpenSSH would
/// negotiate is chosen (so `ssh` and kdeploy pin the same line, whatever
/// the order `ssh-keyscan` wrote them in). A key marked `@revoked` anywhere
/// in the file is never chosen; a host known only by revoked keys is an
/// error, not an unknown host (which `AcceptNew` would learn again).
pub fn lookup(label: &str, names: &[&str], port: u16, file: &Path) -> Result<Option<ExpectedKey>, Error> {
    if !file.exists() {
        return Ok(None);
    }
    let revoked = revoked_keys(label, file)?;
    for name in names {
        let found =
            russh::keys::known_hosts::known_host_keys_path(name, port, file).map_err(|e| unreadable(label, file, e))?;
        if found.is_empty() {
            continue;
        }
        return choose(label, file, found, &revoked).map(Some);
    }
    Ok(None)
}

/// Among the (russh line, key) entries of one host, the key to pin: the
/// preferred algorithm's, revoked keys left out.
fn choose(
    label: &str,
    file: &Path,
    found: Vec<(usize, PublicKey)>,
    revoked: &[(usize, PublicKey)],
) -> Result<ExpectedKey, Error> {
    let mut revoked_line = None;
    let mut valid = Vec::new();
    for (line, key) in found {
        match revoked_at(revoked, &key) {
            Some(r) => revoked_line = revoked_line.or(Some(r)),
            None => valid.push(ExpectedKey { key, line: real_line(file, line) }),
        }
    }
    match (valid.into_iter().min_by_key(|e| (preference(e.key.algorithm()), e.line)), revoked_line) {
        (Some(e), _) => Ok(e),
        (None, line) => Err(revoked_error(label, file, line.unwrap_or(0))),
    }
}

/// Rank of a host key algorithm in OpenSSH's default `HostKeyAlgorithms`
/// (lower is preferred).
fn preference(alg: Algorithm) -> u8 {
    match alg {
        Algorithm::Ed25519 => 0,
        Algorithm::Ecdsa { curve: EcdsaCurve::NistP256 } => 1,
        Algorithm::Ecdsa { curve: EcdsaCurve::NistP384 } => 2,
        Algorithm::Ecdsa { curve: EcdsaCurve::NistP521 } => 3,
        Algorithm::SkEd25519 => 4,
        Algorithm::SkEcdsaSha2NistP256 => 5,
        Algorithm::Rsa { .. } => 6,
        _ => 7,
    }
}

/// Every key of a `@revoked` line, with its line number. The line's host
/// patterns are not consulted: a revoked key's private half is presumed
/// known to someone else, so it is refused for every host (stricter than
/// OpenSSH, and it spares matching hashed or wildcard patterns). A
/// revocation that cannot be read is an error, not a line to skip.
fn revoked_keys(label: &str, file: &Path) -> Result<Vec<(usize, PublicKey)>, Error> {
    let text = std::fs::read_to_string(file).map_err(|e| unreadable(label, file, e))?;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        if fields.first() != Some(&"@revoked") {
            continue;
        }
        let key = fields
            .get(3)
            .and_then(|b64| russh::keys::parse_public_key_base64(b64).ok())
            .ok_or_else(|| unreadable(label, file, format!("line {}: unreadable @revoked entry", i + 1)))?;
        out.push((i + 1, key));
    }
    Ok(out)
}

/// The key a server presented is not revoked in `file` (for keys learnt
/// on first use, which no lookup has vetted).
pub fn refuse_revoked(label: &str, key: &PublicKey, file: &Path) -> Result<(), Error> {
    if !file.exists() {
        return Ok(());
    }
    match revoked_at(&revoked_keys(label, file)?, key) {
        Some(line) => Err(revoked_error(label, file, line)),
        None => Ok(()),
    }
}

/// The line revoking `key`, if any. Compared without comments: the same
/// key under another comment is the same key.
fn revoked_at(revoked: &[(usize, PublicKey)], key: &PublicKey) -> Option<usize> {
    revoked.iter().find(|(_, r)| r.key_data() == key.key_data()).map(|(line, _)| *line)
}

fn revoked_error(label: &str, file: &Path, line: usize) -> Error {
    Error::HostKeyRevoked { host: label.to_string(), file: file.to_path_buf(), line }
}

fn unreadable(label: &str, file: &Path, reason: impl std::fmt::Display) -> Error {
    Error::KnownHosts { host: label.to_string(), file: file.to_path_buf(), reason: reason.to_string() }
}

/// russh numbers known_hosts lines without counting `#` comment lines; turn
/// its number into the line an editor shows.
fn real_line(file: &Path, russh_line: usize) -> usize {
    let Ok(text) = std::fs::read_to_string(file) else {
        return russh_line;
    };
    let mut counted = 0;
    for (i, l) in text.lines().enumerate() {
        if !l.starts_with('#') {
            counted += 1;
            if counted == russh_line {
                return i + 1;
            }
        }
    }
    russh_line
}

/// Serialises appends to known_hosts files from parallel connects.
static LEARN: Mutex<()> = Mutex::new(());

/// Record `key` for `name`:`port` in `file` (trust on first use).
pub fn learn(label: &str, name: &str, port: u16, key: &PublicKey, file: &Path) -> Result<(), Error> {
    let _guard = LEARN.lock().unwrap_or_else(|p| p.into_inner());
    russh::keys::known_hosts::learn_known_hosts_path(name, port, key, file).map_err(|e| unreadable(label, file, e))
}

/// Learn the key a server presents without authenticating (a key scan):
/// the handshake is aborted as soon as the key is seen.
pub async fn scan(label: &str, addr: (&str, u16), config: russh::client::Config) -> Result<PublicKey, Error> {
    let tcp = tokio::net::TcpStream::connect(addr)
        .await
        .map_err(|e| Error::Unreachable { host: label.to_string(), reason: e.to_string() })?;
    scan_stream(label, tcp, config).await
}

/// [`scan`] over an already open stream (a bastion's forwarding channel).
pub async fn scan_stream<S>(label: &str, stream: S, config: russh::client::Config) -> Result<PublicKey, Error>
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let seen = Arc::new(Mutex::new(None));
    let handler = Scanner { seen: seen.clone() };
    let result = russh::client::connect_stream(Arc::new(config), stream, handler).await;
    let key = seen.lock().unwrap_or_else(|p| p.into_inner()).take();
    key.ok_or_else(|| Error::Unreachable {
        host: label.to_string(),
        reason: match result {
            Err(e) => e.to_string(),
            Ok(_) => "the server showed no host key".to_string(),
        },
    })
}

struct Scanner {
    seen: Arc<Mutex<Option<PublicKey>>>,
}

impl russh::client::Handler for Scanner {
    type Error = russh::Error;

    async fn check_server_key(&mut self, key: &PublicKey) -> Result<bool, Self::Error> {
        *self.seen.lock().unwrap_or_else(|p| p.into_inner()) = Some(key.clone());
        Ok(false)
    }
}

#[cfg(test)]
mod tests {
    //! Real keys made by `ssh-keygen` and real hashed lines made by
    //! `ssh-keygen -H`: the parser is exercised as it meets user files.

    use std::path::{Path, PathBuf};
    use std::process::Command;
    use std::sync::OnceLock;

    use russh::keys::{Algorithm, EcdsaCurve, HashAlg, PublicKey};

    use super::{lookup, ExpectedKey};
    use crate::transport::Error;

    struct Keys {
        ed: PublicKey,
        ed2: PublicKey,
        ecdsa: PublicKey,
        rsa: PublicKey,
    }

    fn ssh_keygen(args: &[&str]) {
        let st = Command::new("ssh-keygen").args(args).status().expect("ssh-keygen must be installed");
        assert!(st.success(), "ssh-keygen {args:?} failed");
    }

    /// One key per kind for the whole test binary (RSA generation is slow).
    fn keys() -> &'static Keys {
        static KEYS: OnceLock<Keys> = OnceLock::new();
        KEYS.get_or_init(|| {
            let dir = tempfile::tempdir().unwrap();
            let gen = |name: &str, kind: &[&str]| {
                let path = dir.path().join(name);
                let mut args = vec!["-q", "-N", "", "-C", "", "-f", path.to_str().unwrap()];
                args.extend(kind);
                ssh_keygen(&args);
                PublicKey::from_openssh(&std::fs::read_to_string(path.with_extension("pub")).unwrap()).unwrap()
            };
            Keys {
                ed: gen("ed", &["-t", "ed25519"]),
                ed2: gen("ed2", &["-t", "ed25519"]),
                ecdsa: gen("ecdsa", &["-t", "ecdsa", "-b", "256"]),
                rsa: gen("rsa", &["-t", "rsa", "-b", "2048"]),
            }
        })
    }

    /// `ssh-ed25519 AAAA…`, as a known_hosts line carries it.
    fn text(k: &PublicKey) -> String {
        k.to_openssh().unwrap()
    }

    fn known_hosts(dir: &Path, lines: &[String]) -> PathBuf {
        let file = dir.join("known_hosts");
        std::fs::write(&file, lines.iter().map(|l| format!("{l}\n")).collect::<String>()).unwrap();
        file
    }

    fn find(name: &str, port: u16, file: &Path) -> Option<ExpectedKey> {
        lookup(name, &[name], port, file).unwrap()
    }

    /// (line, key) of what `name`:`port` resolves to.
    fn found(name: &str, port: u16, file: &Path) -> Option<(usize, PublicKey)> {
        find(name, port, file).map(|e| (e.line, e.key))
    }

    #[test]
    fn host_lists_comments_and_blank_lines() {
        let k = keys();
        let dir = tempfile::tempdir().unwrap();
        let file = known_hosts(
            dir.path(),
            &[
                "# kdeploy lab".into(),
                String::new(),
                format!("other.example {}", text(&k.ed2)),
                format!("#node1,10.0.0.1 {}", text(&k.ed2)),
                "   # indented comment".into(),
                format!("node1,10.0.0.1 {} a comment", text(&k.ed)),
            ],
        );
        assert_eq!(found("node1", 22, &file), Some((6, k.ed.clone())));
        assert_eq!(found("10.0.0.1", 22, &file), Some((6, k.ed.clone())));
        assert_eq!(found("other.example", 22, &file), Some((3, k.ed2.clone())));
        // the address is tried before the name
        let e = lookup("n", &["other.example", "node1"], 22, &file).unwrap().unwrap();
        assert_eq!((e.line, e.key), (3, k.ed2.clone()));
    }

    #[test]
    fn unknown_host_or_missing_file() {
        let k = keys();
        let dir = tempfile::tempdir().unwrap();
        assert!(find("node1", 22, &dir.path().join("absent")).is_none());
        let file = known_hosts(dir.path(), &[format!("node1 {}", text(&k.ed))]);
        assert!(find("node2", 22, &file).is_none());
        assert!(find("node", 22, &file).is_none());
        assert!(find("node1.example", 22, &file).is_none());
    }

    #[test]
    fn a_port_entry_matches_only_its_port() {
        let k = keys();
        let dir = tempfile::tempdir().unwrap();
        let file =
            known_hosts(dir.path(), &[format!("[node1]:2222 {}", text(&k.ed)), format!("node1 {}", text(&k.ed2))]);
        assert_eq!(found("node1", 2222, &file), Some((1, k.ed.clone())));
        assert_eq!(found("node1", 22, &file), Some((2, k.ed2.clone())));
        assert!(find("node1", 2200, &file).is_none());
        let only_2222 = known_hosts(dir.path(), &[format!("[node1]:2222 {}", text(&k.ed))]);
        assert!(find("node1", 22, &only_2222).is_none());
        let only_22 = known_hosts(dir.path(), &[format!("node1 {}", text(&k.ed))]);
        assert!(find("node1", 2222, &only_22).is_none());
    }

    #[test]
    fn hashed_entries_written_by_ssh_keygen() {
        let k = keys();
        let dir = tempfile::tempdir().unwrap();
        let file = known_hosts(
            dir.path(),
            &[
                format!("node1 {}", text(&k.ed)),
                format!("[node1]:2222 {}", text(&k.ed2)),
                format!("10.0.0.7 {}", text(&k.ecdsa)),
            ],
        );
        ssh_keygen(&["-q", "-H", "-f", file.to_str().unwrap()]);
        let hashed = std::fs::read_to_string(&file).unwrap();
        assert!(hashed.lines().all(|l| l.starts_with("|1|")), "not hashed:\n{hashed}");
        assert!(!hashed.contains("node1") && !hashed.contains("10.0.0.7"));
        assert_eq!(found("node1", 22, &file), Some((1, k.ed.clone())));
        assert_eq!(found("node1", 2222, &file), Some((2, k.ed2.clone())));
        assert_eq!(found("10.0.0.7", 22, &file), Some((3, k.ecdsa.clone())));
        assert!(find("node1", 2200, &file).is_none());
        assert!(find("node2", 22, &file).is_none());
        assert!(find("10.0.0.7", 2222, &file).is_none());
    }

    #[test]
    fn several_keys_the_preferred_algorithm_wins() {
        let k = keys();
        let dir = tempfile::tempdir().unwrap();
        // ssh-keyscan's order; OpenSSH would negotiate ed25519 here
        let all = known_hosts(
            dir.path(),
            &[format!("n {}", text(&k.rsa)), format!("n {}", text(&k.ecdsa)), format!("n {}", text(&k.ed))],
        );
        let e = find("n", 22, &all).unwrap();
        assert_eq!((e.line, &e.key), (3, &k.ed));
        assert_eq!(e.algorithms(), [Algorithm::Ed25519]);
        let no_ed = known_hosts(dir.path(), &[format!("n {}", text(&k.rsa)), format!("n {}", text(&k.ecdsa))]);
        let e = find("n", 22, &no_ed).unwrap();
        assert_eq!((e.line, &e.key), (2, &k.ecdsa));
        assert_eq!(e.algorithms(), [Algorithm::Ecdsa { curve: EcdsaCurve::NistP256 }]);
        let rsa = known_hosts(dir.path(), &[format!("n {}", text(&k.rsa))]);
        let e = find("n", 22, &rsa).unwrap();
        assert_eq!(
            e.algorithms(),
            [
                Algorithm::Rsa { hash: Some(HashAlg::Sha512) },
                Algorithm::Rsa { hash: Some(HashAlg::Sha256) },
                Algorithm::Rsa { hash: None }
            ]
        );
        // the base64 the SSH client pins is the chosen key's
        assert_eq!(format!("{} {}", k.rsa.algorithm().as_str(), e.base64()), text(&k.rsa));
    }

    fn revoked_line(r: Result<Option<ExpectedKey>, Error>) -> usize {
        match r {
            Err(Error::HostKeyRevoked { line, .. }) => line,
            other => panic!("expected a revoked key, got {other:?}"),
        }
    }

    #[test]
    fn a_revoked_key_is_refused_even_where_listed_as_valid() {
        let k = keys();
        let dir = tempfile::tempdir().unwrap();
        let lines = [format!("node1 {}", text(&k.ed)), format!("@revoked * {} compromised 2024", text(&k.ed))];
        let file = known_hosts(dir.path(), &lines);
        assert_eq!(revoked_line(lookup("node1", &["node1"], 22, &file)), 2);
        // the revocation comes first in the file, and names the host
        let file = known_hosts(dir.path(), &[format!("@revoked node1 {}", text(&k.ed)), lines[0].clone()]);
        assert_eq!(revoked_line(lookup("node1", &["node1"], 22, &file)), 1);
        // a hashed entry for the host does not escape it either
        let file = known_hosts(dir.path(), &lines);
        ssh_keygen(&["-q", "-H", "-f", file.to_str().unwrap()]);
        assert_eq!(revoked_line(lookup("node1", &["node1"], 22, &file)), 2);
        // another, valid key of the host is still usable
        let file = known_hosts(
            dir.path(),
            &[format!("node1 {}", text(&k.ed)), format!("node1 {}", text(&k.rsa)), lines[1].clone()],
        );
        assert_eq!(found("node1", 22, &file), Some((2, k.rsa.clone())));
        // and an unrelated revocation changes nothing
        let file = known_hosts(dir.path(), &[lines[0].clone(), format!("@revoked * {}", text(&k.ed2))]);
        assert_eq!(found("node1", 22, &file), Some((1, k.ed.clone())));
    }

    #[test]
    fn a_cert_authority_is_not_a_host_key() {
        let k = keys();
        let dir = tempfile::tempdir().unwrap();
        let ca = format!("@cert-authority node1,*.example {}", text(&k.ed));
        let file = known_hosts(dir.path(), std::slice::from_ref(&ca));
        assert!(find("node1", 22, &file).is_none());
        let file = known_hosts(dir.path(), &[ca, format!("node1 {}", text(&k.ed2))]);
        assert_eq!(found("node1", 22, &file), Some((2, k.ed2.clone())));
    }
}
