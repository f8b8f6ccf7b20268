//! The deployer's secret store: `.kdeploy/secrets/` under the project root
//! (git-ignored with `.kdeploy/`), directories 0700, files 0600, written
//! through a 0600 temporary file and a rename. It holds `hash.key` (32
//! random bytes: the key of every secret's hash, so a phase hash reveals
//! nothing about a secret) and one file per secret name, e.g.
//! `lab/etcd/member-n1-key.pem`; a certificate's `.spec` file records what
//! it was issued for (names, CA), so a changed spec re-issues it.
//!
//! Evaluation only *reads* here (a missing secret hashes as "not made
//! yet"); [`SecretStore::ensure`], called by `switch` before hashing, makes
//! what is missing and never re-makes what exists. Secret bytes never go
//! into an error message: errors name the file, never its content.

use std::collections::BTreeMap;
use std::fs;
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use time::OffsetDateTime;

use super::pki;
use super::{Digest, Error, Result};
use crate::schema::{CaSpec, CertSpec, Cluster, Make, Secret, Source};

/// The secret store of one project.
#[derive(Debug, Clone)]
pub struct SecretStore {
    dir: PathBuf,
}

fn io(what: &str, p: &Path, e: std::io::Error) -> Error {
    Error(format!("secret store: {what} {}: {e}", p.display()))
}

/// What [`SecretStore::ensure`] did.
#[derive(Debug, Default)]
pub struct Made {
    /// Secret files written (names, never contents).
    pub made: Vec<String>,
}

impl SecretStore {
    pub fn new(dir: impl Into<PathBuf>) -> SecretStore {
        SecretStore { dir: dir.into() }
    }

    /// `.kdeploy/secrets` under the project root.
    pub fn default_dir(project_root: &Path) -> PathBuf {
        project_root.join(".kdeploy").join("secrets")
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Where a secret lives: relative names below the store, absolute
    /// names (a user's own CA) as given.
    pub fn path(&self, name: &str) -> PathBuf {
        if name.starts_with('/') {
            PathBuf::from(name)
        } else {
            self.dir.join(name)
        }
    }

    fn hash_key(&self) -> Option<[u8; 32]> {
        let bytes = fs::read(self.dir.join("hash.key")).ok()?;
        bytes.try_into().ok()
    }

    /// The keyed hash of a secret's bytes, `None` while it (or the hash key)
    /// does not exist yet.
    pub fn keyed_hash(&self, name: &str) -> Result<Option<Digest>> {
        let Some(key) = self.hash_key() else { return Ok(None) };
        let p = self.path(name);
        match fs::read(&p) {
            Ok(b) => Ok(Some(Digest(*blake3::keyed_hash(&key, &b).as_bytes()))),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(io("cannot read", &p, e)),
        }
    }

    pub fn read(&self, name: &str) -> Result<Vec<u8>> {
        let p = self.path(name);
        fs::read(&p).map_err(|e| io("cannot read", &p, e))
    }

    pub fn exists(&self, name: &str) -> bool {
        self.path(name).is_file()
    }

    fn mkdirs(&self, dir: &Path) -> Result<()> {
        fs::DirBuilder::new().recursive(true).mode(0o700).create(dir).map_err(|e| io("cannot create", dir, e))?;
        // The top directory may predate us (made by hand): tighten it.
        fs::set_permissions(&self.dir, fs::Permissions::from_mode(0o700)).map_err(|e| io("cannot chmod", &self.dir, e))
    }

    /// Write a secret file: 0600 from its creation, renamed into place.
    pub fn write(&self, name: &str, bytes: &[u8]) -> Result<()> {
        let dest = self.path(name);
        let parent = dest.parent().expect("secret paths have a parent");
        self.mkdirs(parent)?;
        let tmp = parent.join(format!(".tmp-{}", std::process::id()));
        let _ = fs::remove_file(&tmp);
        let mut f = fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&tmp)
            .map_err(|e| io("cannot create", &tmp, e))?;
        f.write_all(bytes).and_then(|_| f.sync_all()).map_err(|e| io("cannot write", &tmp, e))?;
        fs::rename(&tmp, &dest).map_err(|e| io("cannot rename into", &dest, e))
    }

    /// Make every secret the cluster names that does not exist yet (and the
    /// hash key), re-issue certificates whose spec or CA changed or which
    /// have expired. Certificates merely due for renewal are left to
    /// `kdeploy certs --renew`, which restarts members one at a time.
    pub fn ensure(&self, cluster: &Cluster) -> Result<Made> {
        let _lock = self.lock()?;
        let mut made = Made::default();
        if self.hash_key().is_none() {
            self.write("hash.key", &random(32)?)?;
        }
        let now = OffsetDateTime::now_utc();
        for make in makes(cluster) {
            self.ensure_one(&make.0, &make.1, now, None, &mut made)?;
        }
        Ok(made)
    }

    /// Hold the store's lock (released when the file is dropped): two runs
    /// of one project must not both make the same CA or re-issue one
    /// certificate twice.
    fn lock(&self) -> Result<fs::File> {
        self.mkdirs(&self.dir)?;
        let lock_path = self.dir.join("lock");
        let lock = fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .mode(0o600)
            .open(&lock_path)
            .map_err(|e| io("cannot open", &lock_path, e))?;
        lock.lock().map_err(|e| io("cannot lock", &lock_path, e))?;
        Ok(lock)
    }

    /// `kdeploy certs --renew`: re-issue every certificate of the cluster
    /// that exists and expires within `within_days` of `now`, keeping its
    /// key (peers and clients only ever trust the CA, so a new key buys
    /// nothing and the key file's hash stays put). CAs are not renewed: a
    /// new CA would re-issue every certificate and break trust mid-rollout.
    /// Certificates not made yet are left to `switch`.
    pub fn renew(&self, cluster: &Cluster, within_days: i64, now: OffsetDateTime) -> Result<Made> {
        let _lock = self.lock()?;
        let mut made = Made::default();
        for (name, make) in makes(cluster) {
            if let Make::Cert(c) = &make {
                // Once per certificate (its key file names the same recipe),
                // else a window longer than a lifetime would re-issue twice.
                if name == c.cert && self.exists(&c.cert) && self.exists(&c.key) {
                    self.ensure_one(&name, &make, now, Some(within_days), &mut made)?;
                }
            }
        }
        Ok(made)
    }

    /// Make (or re-issue) one secret; `renew_within`: also re-issue a
    /// certificate that expires within that many days.
    pub fn ensure_one(
        &self,
        name: &str,
        make: &Make,
        now: OffsetDateTime,
        renew_within: Option<i64>,
        made: &mut Made,
    ) -> Result<()> {
        match make {
            Make::Token => {
                if !self.exists(name) {
                    self.write(name, token()?.as_bytes())?;
                    made.made.push(name.to_string());
                }
            }
            Make::Hex { bytes } => {
                if !self.exists(name) {
                    self.write(name, hex::encode(random(*bytes as usize)?).as_bytes())?;
                    made.made.push(name.to_string());
                }
            }
            Make::Ca(ca) => self.ensure_ca(ca, now, made)?,
            Make::Cert(c) => {
                self.ensure_ca(&c.ca, now, made)?;
                self.ensure_cert(c, now, renew_within, made)?;
            }
        }
        Ok(())
    }

    fn ensure_ca(&self, ca: &CaSpec, now: OffsetDateTime, made: &mut Made) -> Result<()> {
        match (self.exists(&ca.cert), self.exists(&ca.key)) {
            (true, true) => Ok(()),
            (false, false) if !ca.cert.starts_with('/') => {
                let pair = pki::make_ca(ca, now).map_err(Error)?;
                self.write(&ca.key, pair.key.as_bytes())?;
                self.write(&ca.cert, pair.cert.as_bytes())?;
                made.made.extend([ca.key.clone(), ca.cert.clone()]);
                Ok(())
            }
            _ => Err(Error(format!(
                "secret store: CA {} and its key {} must both exist (or, for a CA kdeploy makes, both be absent)",
                self.path(&ca.cert).display(),
                self.path(&ca.key).display()
            ))),
        }
    }

    fn ensure_cert(&self, c: &CertSpec, now: OffsetDateTime, renew_within: Option<i64>, made: &mut Made) -> Result<()> {
        let ca_cert = String::from_utf8(self.read(&c.ca.cert)?)
            .map_err(|_| Error(format!("CA certificate {}: not PEM text", c.ca.cert)))?;
        // What the certificate is for, with the CA it is signed by: a new
        // CA or other names re-issue it.
        let spec = format!(
            "{}\nca {}\n",
            serde_json::to_string(c).expect("specs serialise"),
            Digest::of(ca_cert.as_bytes()).hex()
        );
        let spec_name = format!("{}.spec", c.cert);
        let have_key = self.exists(&c.key);
        let reissue = !have_key
            || !self.exists(&c.cert)
            || self.read(&spec_name).ok().as_deref() != Some(spec.as_bytes())
            || match pki::inspect(&self.read(&c.cert)?) {
                Ok(info) => {
                    info.not_after <= now.unix_timestamp()
                        || renew_within.is_some_and(|d| pki::is_due_within(info.not_after, now, d))
                }
                Err(_) => true,
            };
        if !reissue {
            return Ok(());
        }
        let key = if have_key {
            Some(String::from_utf8(self.read(&c.key)?).map_err(|_| Error(format!("key {}: not PEM text", c.key)))?)
        } else {
            None
        };
        let ca_key = String::from_utf8(self.read(&c.ca.key)?)
            .map_err(|_| Error(format!("CA key {}: not PEM text", c.ca.key)))?;
        let pair = pki::issue(c, &ca_cert, &ca_key, key.as_deref(), now).map_err(Error)?;
        if !have_key {
            self.write(&c.key, pair.key.as_bytes())?;
            made.made.push(c.key.clone());
        }
        self.write(&c.cert, pair.cert.as_bytes())?;
        self.write(&spec_name, spec.as_bytes())?;
        made.made.push(c.cert.clone());
        Ok(())
    }
}

/// Every distinct (name, make) of the cluster: CAs before the certificates
/// they sign (`ensure_one` makes a certificate's CA first anyway).
pub fn makes(cluster: &Cluster) -> Vec<(String, Make)> {
    let mut out: BTreeMap<(u8, String), Make> = BTreeMap::new();
    for node in cluster.nodes.values() {
        for phase in &node.phases {
            for f in &phase.files {
                if let Source::Secret(Secret { name, make }) = &f.source {
                    let rank = if matches!(make, Make::Ca(_)) { 0 } else { 1 };
                    out.entry((rank, name.clone())).or_insert_with(|| make.clone());
                }
            }
        }
    }
    out.into_iter().map(|((_, n), m)| (n, m)).collect()
}

fn random(n: usize) -> Result<Vec<u8>> {
    let mut b = vec![0u8; n];
    getrandom::getrandom(&mut b).map_err(|e| Error(format!("no randomness from the OS: {e}")))?;
    Ok(b)
}

/// A kubeadm bootstrap token: `[a-z0-9]{6}.[a-z0-9]{16}`, uniformly drawn
/// (bytes above the largest multiple of 36 are rejected, not folded).
fn token() -> Result<String> {
    const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
    let mut out = String::with_capacity(23);
    while out.len() < 23 {
        for b in random(32)? {
            if out.len() == 6 {
                out.push('.');
            }
            if b < 252 && out.len() < 23 {
                out.push(ALPHABET[(b % 36) as usize] as char);
            }
        }
    }
    Ok(out)
}

/// What `eval --file` prints instead of a secret.
pub fn placeholder(s: &Secret) -> String {
    format!("<secret {}: made and kept by kdeploy on the deployer, never printed>\n", s.name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_have_kubeadms_format() {
        for _ in 0..50 {
            let t = token().unwrap();
            let (a, b) = t.split_once('.').unwrap();
            assert_eq!((a.len(), b.len()), (6, 16), "{t}");
            assert!(t.bytes().all(|c| c == b'.' || c.is_ascii_lowercase() || c.is_ascii_digit()));
        }
    }
}
