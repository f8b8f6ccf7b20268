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
//!
//! Every name a secret definition holds (the secret's own, a certificate's
//! and key's, its CA's) is checked by one rule, [`name_problem`], before
//! any file is touched — by the engine's validation and again here, so a
//! closure that bypassed validation cannot reach a file outside the store.
//! Only a user's own CA (`etcd.caDir`) is named by absolute path; it is
//! read where it lies, confined as every deployer file a cluster names
//! (`confine.rs`), and never written.

use std::collections::BTreeMap;
use std::fs;
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use time::OffsetDateTime;

use super::confine::Confinement;
use super::pki;
use super::{Digest, Error, Result};
use crate::schema::{CaSpec, CertSpec, Cluster, Make, Secret, Source};

/// The secret store of one project.
#[derive(Debug, Clone)]
pub struct SecretStore {
    dir: PathBuf,
    /// Where a user's own CA may be read from.
    confine: Confinement,
}

/// The store's own files, which no secret may be named.
const OWN_FILES: [&str; 2] = ["hash.key", "lock"];

/// Why `name` cannot name a file of the secret store (`None`: it can):
/// relative, parts of letters, digits and `. _ @ -`, none empty or
/// starting with `.` (so no `..`, and no clash with temporary files).
/// The one rule for every name field of a secret.
pub fn name_problem(name: &str) -> Option<&'static str> {
    if name.is_empty() {
        Some("is empty")
    } else if name.starts_with('/') {
        Some("is absolute (secret names are relative to the secret store)")
    } else if name.chars().any(char::is_control) {
        Some("contains a control character")
    } else if name.split('/').any(|c| c.is_empty() || c.starts_with('.')) {
        Some("has an empty part or one starting with '.' (such as '..')")
    } else if !name.bytes().all(|b| b.is_ascii_alphanumeric() || b"/._@-".contains(&b)) {
        Some("has characters other than letters, digits and / . _ @ -")
    } else if OWN_FILES.contains(&name) {
        Some("is a file of the secret store itself")
    } else {
        None
    }
}

/// Why a name field of a secret is wrong (`None`: it is right); `own`:
/// the field may name a user's own CA file by absolute, normalised path.
pub fn field_problem(name: &str, own: bool) -> Option<&'static str> {
    if own && name.starts_with('/') {
        let clean = !name.chars().any(char::is_control)
            && name.len() > 1
            && name[1..].split('/').all(|c| !c.is_empty() && c != "." && c != "..");
        return (!clean).then_some("is not a normalised absolute path");
    }
    name_problem(name)
}

/// Every name field of a secret: (field, name, may it be a user's own CA).
pub fn name_fields(s: &Secret) -> Vec<(&'static str, &str, bool)> {
    let mut out = vec![("name", s.name.as_str(), matches!(s.make, Make::Ca(_)))];
    match &s.make {
        Make::Token | Make::Hex { .. } => {}
        Make::Ca(ca) => out.extend([("make.cert", ca.cert.as_str(), true), ("make.key", ca.key.as_str(), true)]),
        Make::Cert(c) => out.extend([
            ("make.cert", c.cert.as_str(), false),
            ("make.key", c.key.as_str(), false),
            ("make.ca.cert", c.ca.cert.as_str(), true),
            ("make.ca.key", c.ca.key.as_str(), true),
        ]),
        // the pin is derived from a CA kdeploy makes: all relative
        Make::CaPin(p) => {
            out.extend([("make.ca.cert", p.ca.cert.as_str(), false), ("make.ca.key", p.ca.key.as_str(), false)])
        }
    }
    out
}

/// Why a secret's names are wrong, one message per wrong field (none:
/// they are right): each name by [`field_problem`], the secret's own name
/// one of the files its make produces, and a CA either the user's own
/// (cert and key absolute) or kdeploy's (both relative).
pub fn names_problems(s: &Secret) -> Vec<String> {
    let mut out: Vec<String> = name_fields(s)
        .into_iter()
        .filter_map(|(field, name, own)| field_problem(name, own).map(|why| format!("{field} {name:?} {why}")))
        .collect();
    let produced: Vec<&str> = match &s.make {
        Make::Token | Make::Hex { .. } | Make::CaPin(_) => vec![s.name.as_str()],
        // a CA's key is a file of its own only where it must be on nodes (Kubernetes')
        Make::Ca(ca) if ca.key_on_nodes => vec![ca.cert.as_str(), ca.key.as_str()],
        Make::Ca(ca) => vec![ca.cert.as_str()],
        Make::Cert(c) => vec![c.cert.as_str(), c.key.as_str()],
    };
    if !produced.contains(&s.name.as_str()) {
        out.push(format!("is not a file its make produces ({})", produced.join(", ")));
    }
    let ca = match &s.make {
        Make::Ca(ca) => Some(("make", ca)),
        Make::Cert(c) => Some(("make.ca", &c.ca)),
        Make::CaPin(p) => Some(("make.ca", &p.ca)),
        Make::Token | Make::Hex { .. } => None,
    };
    if let Some((at, ca)) = ca.filter(|(_, ca)| ca.cert.starts_with('/') != ca.key.starts_with('/')) {
        out.push(format!(
            "{at}.cert {:?} and {at}.key {:?}: a CA is the user's own (both absolute) or kdeploy's (both relative)",
            ca.cert, ca.key
        ));
    }
    out
}

/// Every name of every secret `cluster` names, checked: the first wrong
/// one is an error naming it (quoted: it may hold anything).
fn check_names(cluster: &Cluster) -> Result<()> {
    for node in cluster.nodes.values() {
        for f in node.phases.iter().flat_map(|p| &p.files) {
            let Source::Secret(s) = &f.source else { continue };
            if let Some(why) = names_problems(s).into_iter().next() {
                return Err(Error::BadSecret { name: s.name.clone(), why });
            }
        }
    }
    Ok(())
}

fn io(what: &'static str, p: &Path, e: std::io::Error) -> Error {
    Error::SecretIo { what, path: p.to_path_buf(), reason: e.to_string() }
}

/// What [`SecretStore::ensure`] did.
#[derive(Debug, Default)]
pub struct Made {
    /// Secret files written (names, never contents).
    pub made: Vec<String>,
}

impl SecretStore {
    /// The store in `dir`; a user's own CA is read only from the system's
    /// directories (see [`SecretStore::confined`]).
    pub fn new(dir: impl Into<PathBuf>) -> SecretStore {
        SecretStore { dir: dir.into(), confine: Confinement::system() }
    }

    /// The project's store (`.kdeploy/secrets`), reading a user's own CA
    /// where the project's `local` sources may be read (no `--allow-local`).
    pub fn of_project(project_root: &Path) -> SecretStore {
        SecretStore::new(Self::default_dir(project_root)).confined(Confinement::new(project_root))
    }

    /// Read a user's own CA only where `confine` allows.
    pub fn confined(self, confine: Confinement) -> SecretStore {
        SecretStore { confine, ..self }
    }

    /// `.kdeploy/secrets` under the project root.
    pub fn default_dir(project_root: &Path) -> PathBuf {
        project_root.join(".kdeploy").join("secrets")
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Where a secret lives: a relative name below the store (once it is
    /// known to be a secret name), an absolute one (a user's own CA) where
    /// it lies, once it is known to be a regular file where deployer files
    /// may be read.
    pub fn path(&self, name: &str) -> Result<PathBuf> {
        if name.starts_with('/') {
            if let Some(why) = field_problem(name, true) {
                return Err(Error::BadSecretPath { name: name.to_string(), why });
            }
            return self.confine.deployer_file(name);
        }
        match name_problem(name) {
            Some(why) => Err(Error::BadSecretName { name: name.to_string(), why }),
            None => Ok(self.dir.join(name)),
        }
    }

    fn hash_key(&self) -> Option<[u8; 32]> {
        let bytes = fs::read(self.dir.join("hash.key")).ok()?;
        bytes.try_into().ok()
    }

    /// The keyed hash of a secret's bytes, `None` while it (or the hash key)
    /// does not exist yet.
    pub fn keyed_hash(&self, name: &str) -> Result<Option<Digest>> {
        if !self.exists(name)? {
            return Ok(None);
        }
        Ok(self.keyed_hash_of(&self.read(name)?))
    }

    /// The keyed hash of secret bytes read elsewhere (a user's own key
    /// file), `None` while the hash key does not exist yet.
    pub fn keyed_hash_of(&self, bytes: &[u8]) -> Option<Digest> {
        let key = self.hash_key()?;
        Some(Digest(*blake3::keyed_hash(&key, bytes).as_bytes()))
    }

    pub fn read(&self, name: &str) -> Result<Vec<u8>> {
        let p = self.path(name)?;
        fs::read(&p).map_err(|e| io("cannot read", &p, e))
    }

    /// Whether the secret exists; a user's own file that exists must also
    /// lie where it may be read (an error otherwise).
    pub fn exists(&self, name: &str) -> Result<bool> {
        if name.starts_with('/') && !Path::new(name).exists() {
            return Ok(false);
        }
        Ok(self.path(name)?.is_file())
    }

    fn mkdirs(&self, dir: &Path) -> Result<()> {
        fs::DirBuilder::new().recursive(true).mode(0o700).create(dir).map_err(|e| io("cannot create", dir, e))?;
        // The top directory may predate us (made by hand): tighten it.
        fs::set_permissions(&self.dir, fs::Permissions::from_mode(0o700)).map_err(|e| io("cannot chmod", &self.dir, e))
    }

    /// Write a secret file: 0600 from its creation, renamed into place.
    /// Only below the store: a user's own files are never written.
    pub fn write(&self, name: &str, bytes: &[u8]) -> Result<()> {
        if name.starts_with('/') {
            return Err(Error::UserFile { name: name.to_string() });
        }
        self.write_at(&self.path(name)?, bytes)
    }

    /// Write `dest` (in the store) as [`SecretStore::write`] does.
    fn write_at(&self, dest: &Path, bytes: &[u8]) -> Result<()> {
        let parent = dest.parent().unwrap_or(&self.dir);
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
        fs::rename(&tmp, dest).map_err(|e| io("cannot rename into", dest, e))
    }

    /// Make every secret the cluster names that does not exist yet (and the
    /// hash key), re-issue certificates whose spec or CA changed or which
    /// have expired. Certificates merely due for renewal are left to
    /// `kdeploy certs --renew`, which restarts members one at a time.
    pub fn ensure(&self, cluster: &Cluster) -> Result<Made> {
        check_names(cluster)?;
        let _lock = self.lock()?;
        let mut made = Made::default();
        if self.hash_key().is_none() {
            self.write_at(&self.dir.join("hash.key"), &random(32)?)?;
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
        check_names(cluster)?;
        let _lock = self.lock()?;
        let mut made = Made::default();
        for (name, make) in makes(cluster) {
            if let Make::Cert(c) = &make {
                // Once per certificate (its key file names the same recipe),
                // else a window longer than a lifetime would re-issue twice.
                if name == c.cert && self.exists(&c.cert)? && self.exists(&c.key)? {
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
                if !self.exists(name)? {
                    self.write(name, token()?.as_bytes())?;
                    made.made.push(name.to_string());
                }
            }
            Make::Hex { bytes } => {
                if !self.exists(name)? {
                    self.write(name, hex::encode(random(*bytes as usize)?).as_bytes())?;
                    made.made.push(name.to_string());
                }
            }
            Make::Ca(ca) => self.ensure_ca(ca, now, made)?,
            Make::Cert(c) => {
                self.ensure_ca(&c.ca, now, made)?;
                self.ensure_cert(c, now, renew_within, made)?;
            }
            Make::CaPin(p) => {
                self.ensure_ca(&p.ca, now, made)?;
                // Derived: kept equal to the CA's pin (a CA given anew changes it).
                let pin = pki::public_key_pin(&self.read(&p.ca.cert)?)?;
                if self.read(name).ok().as_deref() != Some(pin.as_bytes()) {
                    self.write(name, pin.as_bytes())?;
                    made.made.push(name.to_string());
                }
            }
        }
        Ok(())
    }

    fn ensure_ca(&self, ca: &CaSpec, now: OffsetDateTime, made: &mut Made) -> Result<()> {
        match (self.exists(&ca.cert)?, self.exists(&ca.key)?) {
            (true, true) => Ok(()),
            (false, false) if !ca.cert.starts_with('/') => {
                let pair = pki::make_ca(ca, now)?;
                self.write(&ca.key, pair.key.as_bytes())?;
                self.write(&ca.cert, pair.cert.as_bytes())?;
                made.made.extend([ca.key.clone(), ca.cert.clone()]);
                Ok(())
            }
            _ => Err(Error::CaHalf { cert: self.shown(&ca.cert), key: self.shown(&ca.key) }),
        }
    }

    /// Where a secret is, for a message.
    fn shown(&self, name: &str) -> String {
        if name.starts_with('/') {
            name.to_string()
        } else {
            self.dir.join(name).display().to_string()
        }
    }

    fn ensure_cert(&self, c: &CertSpec, now: OffsetDateTime, renew_within: Option<i64>, made: &mut Made) -> Result<()> {
        let not_pem = |what, name: &String| Error::NotPem { what, name: name.clone() };
        let ca_cert = String::from_utf8(self.read(&c.ca.cert)?).map_err(|_| not_pem("CA certificate", &c.ca.cert))?;
        // What the certificate is for, with the CA it is signed by: a new
        // CA or other names re-issue it.
        let spec = format!(
            "{}\nca {}\n",
            serde_json::to_string(c).expect("specs serialise"),
            Digest::of(ca_cert.as_bytes()).hex()
        );
        let spec_name = format!("{}.spec", c.cert);
        let have_key = self.exists(&c.key)?;
        let reissue = !have_key
            || !self.exists(&c.cert)?
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
            Some(String::from_utf8(self.read(&c.key)?).map_err(|_| not_pem("key", &c.key))?)
        } else {
            None
        };
        let ca_key = String::from_utf8(self.read(&c.ca.key)?).map_err(|_| not_pem("CA key", &c.ca.key))?;
        let pair = pki::issue(c, &ca_cert, &ca_key, key.as_deref(), now)?;
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
    getrandom::getrandom(&mut b).map_err(|e| Error::NoRandomness { reason: e.to_string() })?;
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
pub fn placeholder(source: &Source) -> String {
    match source {
        Source::SecretFile(p) => format!("<secret {p}: read on the deployer, sent only to the nodes, never printed>\n"),
        Source::SecretCommand(argv) => format!(
            "<secret from `{}`: run on the deployer, sent only to the nodes, never printed>\n",
            crate::schema::command_line(argv)
        ),
        _ => format!(
            "<secret {}: made and kept by kdeploy on the deployer, never printed>\n",
            source.secret_name().unwrap_or_else(|| "?".into())
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_names_are_relative_plain_parts() {
        for ok in ["lab/etcd/ca.pem", "t/kubeadm/token", "a", "a/b-c_d@e.f", "x/member-n1.pem.spec"] {
            assert_eq!(name_problem(ok), None, "{ok}");
        }
        for bad in [
            "", "/etc/x", "../x", "a/../b", "a//b", "a/", "./a", ".hidden", "a/.tmp-1", "a\nb", "a b", "a\\b",
            "hash.key", "lock",
        ] {
            assert!(name_problem(bad).is_some(), "{bad:?}");
        }
        assert_eq!(field_problem("/srv/pki/ca-key.pem", true), None);
        for bad in ["/srv/../etc/ca.pem", "/srv//ca.pem", "/", "/srv/ca\n.pem"] {
            assert!(field_problem(bad, true).is_some(), "{bad:?}");
        }
        assert!(field_problem("/srv/pki/ca-key.pem", false).is_some());
    }

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
