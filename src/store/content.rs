//! Naming and reading the content of a file source. `ContentId` is what a
//! phase hash covers: the blake3 of the bytes for text, project and deployer
//! files; for an artifact its *declared* sha256 (plus the archive member),
//! which already pins the bytes — so hashing a closure needs no download
//! and gives the same answer offline and on any machine. `Resolver` turns a
//! source into bytes or a stored blob when they are really needed (printing
//! a file, pushing to nodes).

use std::io::Read;
use std::path::{Path, PathBuf};

use super::artifact::{self, Fetcher};
use super::{project_file_path, read_project_file, Digest, Error, Result, SecretStore, Store};
use crate::closure::Source;

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
}

impl Resolver {
    /// The project root is where `file` sources live; the store defaults to
    /// `.kdeploy/store` below it.
    pub fn new(project_root: impl Into<PathBuf>, store: Store, fetcher: Box<dyn Fetcher>) -> Resolver {
        let project_root = project_root.into();
        let secrets = SecretStore::new(SecretStore::default_dir(&project_root));
        Resolver { project_root, store, secrets, fetcher }
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

    /// The content identity of a source, reading (not storing) local bytes.
    pub fn content_id(&self, source: &Source) -> Result<ContentId> {
        match source {
            Source::Text(t) => Ok(ContentId::of_bytes(t.as_bytes())),
            Source::Artifact(a) => Ok(ContentId::Artifact {
                sha256: a.sha256.to_ascii_lowercase(),
                member: a.member.as_deref().map(|m| normalize_member(m).to_string()),
            }),
            Source::Secret(s) => {
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
            Source::Local(p) => {
                if !Path::new(p).is_absolute() {
                    return Err(Error(format!("deployer file {p:?}: must be an absolute path")));
                }
                Ok(Readable::Path(PathBuf::from(p)))
            }
            Source::Artifact(a) if a.member.is_none() => {
                let blob = artifact::download_blob(&self.store, &*self.fetcher, &self.downloads_dir(), a)?;
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
            Source::Local(p) => read_local(p),
            Source::Secret(s) => self.secrets.read(&s.name),
            Source::Artifact(a) => {
                let blob = artifact::download_blob(&self.store, &*self.fetcher, &self.downloads_dir(), a)?;
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

fn read_local(p: &str) -> Result<Vec<u8>> {
    if !Path::new(p).is_absolute() {
        return Err(Error(format!("deployer file {p:?}: must be an absolute path")));
    }
    std::fs::read(p).map_err(|e| Error(format!("deployer file {p}: {e}")))
}
