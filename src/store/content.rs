//! Naming and reading the content of a file source. `ContentId` is what a
//! phase hash covers: the blake3 of the bytes for text, project and deployer
//! files; for an artifact its *declared* sha256 (plus the archive member),
//! which already pins the bytes — so hashing a closure needs no download
//! and gives the same answer offline and on any machine. `Resolver` turns a
//! source into bytes or a stored blob when they are really needed (printing
//! a file, pushing to nodes).
//!
//! A `local` source (a file of the deployer named by absolute path, e.g.
//! `download.local`) is read only from below the project root, the system's
//! binary directories ([`Resolver::DEFAULT_LOCAL_DIRS`]) and the directories the user
//! names (`--allow-local DIR`, `KDEPLOY_ALLOW_LOCAL`), symlinks resolved
//! before the check — as the evaluator confines what a cluster file reads:
//! the cluster file chooses what to read, so it cannot be what allows it.
//! The same holds for a secret the cluster names by absolute path (a user's
//! own CA).

use std::io::Read;
use std::path::{Path, PathBuf};

use super::artifact::{self, Fetcher};
use super::secrets::{makes, Made};
use super::{project_file_path, read_project_file, Digest, Error, Result, SecretStore, Store};
use crate::schema::{Cluster, Make, Source};

/// The identity of a file's content.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ContentId {
    /// Bytes we have: their blake3 and length.
    Blob { digest: Digest, size: u64 },
    /// A download, named by its declared checksum; `member` is the archive
    /// member with any leading `./` removed (both spellings are the same file).
    Artifact { sha256: String, member: Option<String> },
    /// A secret, named by the keyed blake3 of its bytes (the key never
    /// leaves the deployer, so the name tells nothing about the bytes);
    /// `None` while the secret is not made yet.
    Secret { name: String, keyed: Option<Digest> },
}

impl ContentId {
    pub fn of_bytes(bytes: &[u8]) -> ContentId {
        ContentId::Blob { digest: Digest::of(bytes), size: bytes.len() as u64 }
    }

    /// The string that stands for the content in canonical encodings.
    pub fn canonical(&self) -> String {
        match self {
            ContentId::Blob { digest, .. } => format!("blake3:{}", digest.hex()),
            ContentId::Artifact { sha256, member: None } => format!("sha256:{sha256}"),
            ContentId::Artifact { sha256, member: Some(m) } => format!("sha256:{sha256}!{m}"),
            ContentId::Secret { keyed: Some(k), .. } => format!("secret:{}", k.hex()),
            ContentId::Secret { name, keyed: None } => format!("secret:{name}:not-made-yet"),
        }
    }

    pub fn size(&self) -> Option<u64> {
        match self {
            ContentId::Blob { size, .. } => Some(*size),
            ContentId::Artifact { .. } | ContentId::Secret { .. } => None,
        }
    }
}

pub(crate) fn normalize_member(m: &str) -> &str {
    m.strip_prefix("./").unwrap_or(m)
}

/// Reads sources relative to one project, with one store and fetcher.
pub struct Resolver {
    project_root: PathBuf,
    store: Store,
    secrets: SecretStore,
    fetcher: Box<dyn Fetcher>,
    /// Where `local` sources may be read from (as given; resolved when used).
    local_dirs: Vec<PathBuf>,
}

impl Resolver {
    /// Where `local` sources may be read from besides the project root and
    /// the directories the user names: where packages put binaries (the lab
    /// takes Debian's etcd, containerd and runc from /usr/bin and /usr/sbin).
    /// Never /etc, /root or /home: that is where a deployer keeps secrets.
    pub const DEFAULT_LOCAL_DIRS: &'static [&'static str] = &[
        "/usr/bin",
        "/usr/sbin",
        "/usr/local/bin",
        "/usr/local/sbin",
        "/usr/lib",
        "/usr/libexec",
        "/usr/local/lib",
        "/opt",
        "/bin",
        "/sbin",
    ];

    /// The project root is where `file` sources live; the store defaults to
    /// `.kdeploy/store` below it.
    pub fn new(project_root: impl Into<PathBuf>, store: Store, fetcher: Box<dyn Fetcher>) -> Resolver {
        let project_root = project_root.into();
        let secrets = SecretStore::new(SecretStore::default_dir(&project_root));
        let local_dirs =
            std::iter::once(project_root.clone()).chain(Self::DEFAULT_LOCAL_DIRS.iter().map(PathBuf::from)).collect();
        Resolver { project_root, store, secrets, fetcher, local_dirs }
    }

    /// Also read `local` sources from below these directories.
    pub fn allow_local(mut self, dirs: impl IntoIterator<Item = PathBuf>) -> Resolver {
        self.local_dirs.extend(dirs);
        self
    }

    /// The directories `local` sources may be read from, as given.
    pub fn local_dirs(&self) -> &[PathBuf] {
        &self.local_dirs
    }

    /// The real path of the deployer file `p` names, once it is known to be a
    /// regular file below one of [`Resolver::local_dirs`] (symlinks resolved
    /// first, as the evaluator does for project files).
    pub fn local_file_path(&self, p: &str) -> Result<PathBuf> {
        if !Path::new(p).is_absolute() {
            return Err(Error(format!("deployer file {p:?}: must be an absolute path")));
        }
        let real = std::fs::canonicalize(p).map_err(|e| Error(format!("deployer file {p}: {e}")))?;
        // Resolved too: `/bin` may be a link to `/usr/bin`, the root `.`.
        let dirs: Vec<PathBuf> =
            self.local_dirs.iter().map(|d| std::fs::canonicalize(d).unwrap_or_else(|_| d.clone())).collect();
        if !dirs.iter().any(|d| real.starts_with(d)) {
            let resolved =
                if real == Path::new(p) { String::new() } else { format!(" (resolves to {})", real.display()) };
            let mut shown: Vec<String> = Vec::new();
            for d in dirs.iter().map(|d| d.display().to_string()) {
                if !shown.contains(&d) {
                    shown.push(d);
                }
            }
            return Err(Error(format!(
                "deployer file {p}{resolved}: outside the directories local sources may be read from ({}); \
                 allow its directory with --allow-local DIR or KDEPLOY_ALLOW_LOCAL=DIR[:DIR...]",
                shown.join(", ")
            )));
        }
        if !real.is_file() {
            return Err(Error(format!("deployer file {p}: not a regular file")));
        }
        Ok(real)
    }

    /// A secret named by absolute path is a deployer file like a `local` one.
    fn check_own_secret(&self, name: &str) -> Result<()> {
        if name.starts_with('/') {
            self.local_file_path(name)?;
        }
        Ok(())
    }

    /// Make the secrets the cluster lacks ([`SecretStore::ensure`]), after
    /// checking that a user's own CA (`etcd.caDir`, named by absolute path)
    /// lies where local sources may be read: its key is read only here.
    pub fn ensure_secrets(&self, cluster: &Cluster) -> Result<Made> {
        for (_, make) in makes(cluster) {
            let ca = match &make {
                Make::Ca(ca) => ca,
                Make::Cert(c) => &c.ca,
                Make::Token | Make::Hex { .. } => continue,
            };
            self.check_own_secret(&ca.cert)?;
            self.check_own_secret(&ca.key)?;
        }
        self.secrets.ensure(cluster)
    }

    /// Keep secrets in `dir` instead of `.kdeploy/secrets` below the
    /// project root (one PKI shared by several projects, or secrets on
    /// an encrypted mount).
    pub fn with_secrets(mut self, dir: impl Into<PathBuf>) -> Resolver {
        self.secrets = SecretStore::new(dir);
        self
    }

    pub fn project_root(&self) -> &Path {
        &self.project_root
    }

    pub fn store(&self) -> &Store {
        &self.store
    }

    pub fn secrets(&self) -> &SecretStore {
        &self.secrets
    }

    /// Where a user can drop a download by hand: `.kdeploy/downloads/`
    /// next to the store directory.
    pub fn downloads_dir(&self) -> PathBuf {
        self.store.dir().parent().unwrap_or(self.store.dir()).join("downloads")
    }

    /// Every artifact of `artifacts` fetched (once per sha256, `parallel`
    /// at a time) and verified into the store, or every reason why not.
    pub fn fetch_all(
        &self,
        artifacts: &[&crate::schema::Artifact],
        parallel: usize,
        events: &dyn artifact::FetchEvents,
    ) -> Result<artifact::Fetched> {
        self.fetch_all_with(&*self.fetcher, artifacts, parallel, events)
    }

    /// [`Self::fetch_all`] through another fetcher (one with the cluster's
    /// proxy); the store and the downloads directory stay this resolver's.
    pub fn fetch_all_with(
        &self,
        fetcher: &dyn Fetcher,
        artifacts: &[&crate::schema::Artifact],
        parallel: usize,
        events: &dyn artifact::FetchEvents,
    ) -> Result<artifact::Fetched> {
        artifact::fetch_all(&self.store, fetcher, &self.downloads_dir(), artifacts, parallel, events)
    }

    /// The artifact is in the store, or dropped by hand into the downloads
    /// directory: no fetch needed.
    pub fn has_artifact(&self, a: &crate::schema::Artifact) -> bool {
        self.store.by_sha256(&a.sha256.to_ascii_lowercase()).is_some() || self.downloads_dir().join(&a.name).is_file()
    }

    /// The content identity of a source, reading (not storing) local bytes.
    pub fn content_id(&self, source: &Source) -> Result<ContentId> {
        match source {
            Source::Text(t) => Ok(ContentId::of_bytes(t.as_bytes())),
            Source::Artifact(a) => Ok(ContentId::Artifact {
                sha256: a.sha256.to_ascii_lowercase(),
                member: a.member.as_deref().map(|m| normalize_member(m).to_string()),
            }),
            Source::Secret(s) => {
                self.check_own_secret(&s.name)?;
                Ok(ContentId::Secret { name: s.name.clone(), keyed: self.secrets.keyed_hash(&s.name)? })
            }
            Source::File(_) | Source::Local(_) => match self.readable(source)? {
                Readable::Path(p) => hash_file(&p),
                Readable::Bytes(b) => Ok(ContentId::of_bytes(&b)),
            },
        }
    }

    /// Where a source's bytes can be read from: a file on this machine
    /// (streamed, never held whole in memory — binaries are tens of MB) or,
    /// for inline text and archive members, the bytes themselves.
    pub fn readable(&self, source: &Source) -> Result<Readable> {
        match source {
            Source::File(rel) => Ok(Readable::Path(project_file_path(&self.project_root, rel)?)),
            Source::Local(p) => Ok(Readable::Path(self.local_file_path(p)?)),
            Source::Artifact(a) if a.member.is_none() => {
                let blob = artifact::download_blob(&self.store, &*self.fetcher, &self.downloads_dir(), a, &|_, _| {})?;
                Ok(Readable::Path(self.store.blob_path(&blob)))
            }
            Source::Text(_) | Source::Artifact(_) | Source::Secret(_) => Ok(Readable::Bytes(self.bytes(source)?)),
        }
    }

    /// The bytes of a source; an artifact is taken from the store, fetched
    /// (and verified) first if absent. A secret's bytes: only for sending
    /// them to a node, never for printing.
    pub fn bytes(&self, source: &Source) -> Result<Vec<u8>> {
        match source {
            Source::Text(t) => Ok(t.as_bytes().to_vec()),
            Source::File(rel) => read_project_file(&self.project_root, rel),
            Source::Local(p) => {
                let real = self.local_file_path(p)?;
                std::fs::read(&real).map_err(|e| Error(format!("deployer file {p}: {e}")))
            }
            Source::Secret(s) => {
                self.check_own_secret(&s.name)?;
                self.secrets.read(&s.name)
            }
            Source::Artifact(a) => {
                let blob = artifact::download_blob(&self.store, &*self.fetcher, &self.downloads_dir(), a, &|_, _| {})?;
                let bytes = self.store.read(&blob)?;
                match &a.member {
                    None => Ok(bytes),
                    Some(m) => artifact::extract_member(&bytes, m)
                        .map_err(|e| Error(format!("artifact {}: member {m:?}: {e}", a.name))),
                }
            }
        }
    }

    /// Put a source's bytes into the store and name the blob.
    pub fn store_source(&self, source: &Source) -> Result<Digest> {
        self.store.put(&self.bytes(source)?)
    }
}

/// A source's bytes, as [`Resolver::readable`] finds them.
pub enum Readable {
    Path(PathBuf),
    Bytes(Vec<u8>),
}

impl Readable {
    /// The hex sha256 of the content, read in chunks.
    pub fn sha256(&self) -> Result<String> {
        use sha2::Digest as _;
        let mut h = sha2::Sha256::new();
        match self {
            Readable::Bytes(b) => h.update(b),
            Readable::Path(p) => {
                let mut f = open(p)?;
                let mut buf = vec![0u8; 256 * 1024];
                loop {
                    let n = f.read(&mut buf).map_err(|e| Error(format!("{}: {e}", p.display())))?;
                    if n == 0 {
                        break;
                    }
                    h.update(&buf[..n]);
                }
            }
        }
        Ok(hex::encode(h.finalize()))
    }
}

fn open(p: &Path) -> Result<std::fs::File> {
    std::fs::File::open(p).map_err(|e| Error(format!("deployer file {}: {e}", p.display())))
}

/// blake3 and size of a file, streamed.
fn hash_file(p: &Path) -> Result<ContentId> {
    let mut h = blake3::Hasher::new();
    h.update_reader(open(p)?).map_err(|e| Error(format!("deployer file {}: {e}", p.display())))?;
    let size = h.count();
    Ok(ContentId::Blob { digest: Digest(*h.finalize().as_bytes()), size })
}
