//! Naming and reading the content of a file source. `ContentId` is what a
//! phase hash covers: the blake3 of the bytes for text, project and deployer
//! files; for an artifact its *declared* sha256 (plus the archive member),
//! which already pins the bytes — so hashing a closure needs no download
//! and gives the same answer offline and on any machine. `Resolver` turns a
//! source into bytes or a stored blob when they are really needed (printing
//! a file, pushing to nodes).
//!
//! Every file a source reads on the deployer is confined (`confine.rs`:
//! the project root, the system's binary directories, `--allow-local`
//! ones; never kdeploy's private state), and a plain source (`text`,
//! `file`, `local`) holding key material is refused (`key_material.rs`):
//! keys travel as secrets — kdeploy's own (`secret`) or the user's own
//! (`secretFile`) — which are hashed with the deployer's key, sent only over
//! SSH and never stored in the blob store, cached or printed.

use std::io::Read;
use std::path::{Path, PathBuf};

use super::artifact::{self, Fetcher};
use super::confine::Confinement;
use super::hash_index::HashIndex;
use super::key_material;
use super::secrets::Made;
use super::{ArtifactFault, Digest, Error, FileFault, Result, SecretStore, Store};
use crate::schema::{Cluster, Source};

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
    /// `None` while the secret (or, for a user's `secretFile`, the secret
    /// store's hash key) is not made yet.
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
    /// Where the files sources name may be read from.
    confine: Confinement,
    /// The largest download taken (bytes).
    max_download: u64,
    /// Whether `secretCommand` sources may run (`--allow-secret-commands`).
    allow_commands: bool,
    /// Each `secretCommand`'s output, kept for the run: it runs once, and
    /// the bytes pushed are the bytes hashed.
    command_output: std::sync::Mutex<std::collections::HashMap<Vec<String>, Vec<u8>>>,
    /// The hashes of deployer files kept between runs (in the store).
    hashes: HashIndex,
}

impl Resolver {
    /// The project root is where `file` sources live; the store defaults to
    /// `.kdeploy/store` below it.
    pub fn new(project_root: impl Into<PathBuf>, store: Store, fetcher: Box<dyn Fetcher>) -> Resolver {
        let project_root = project_root.into();
        let confine = Confinement::new(&project_root);
        let secrets = SecretStore::new(SecretStore::default_dir(&project_root)).confined(confine.clone());
        let max_download = artifact::max_download();
        let hashes = HashIndex::load(store.dir().join("hashes.json"));
        Resolver {
            project_root,
            store,
            secrets,
            fetcher,
            confine,
            max_download,
            allow_commands: false,
            command_output: Default::default(),
            hashes,
        }
    }

    /// Keeps the hashes this run made of deployer files for the next
    /// (`hash_index.rs`); best effort.
    pub fn save_hashes(&self) {
        self.hashes.save();
    }

    /// A deployer file's content and why it is key material if it is: as
    /// recorded if its stat is the recorded one, else hashed (and recorded).
    fn hashed(&self, real: &Path) -> Result<(ContentId, Option<&'static str>)> {
        let before = std::fs::metadata(real).ok();
        if let Some(id) = before.as_ref().and_then(|m| self.hashes.get(real, m)) {
            return Ok((id, None));
        }
        let (id, key) = hash_file(real)?;
        if let (Some(before), None) = (&before, key) {
            self.hashes.put(real, before, &id);
        }
        Ok((id, key))
    }

    /// Let `secretCommand` sources run their programs on this machine.
    pub fn allow_secret_commands(mut self, allow: bool) -> Resolver {
        self.allow_commands = allow;
        self
    }

    /// Also read `local` sources from below these directories.
    pub fn allow_local(mut self, dirs: impl IntoIterator<Item = PathBuf>) -> Resolver {
        self.confine = self.confine.allow(dirs);
        self.secrets = self.secrets.confined(self.confine.clone());
        self
    }

    /// Take downloads of at most `bytes` (default [`artifact::max_download`]).
    pub fn max_download(mut self, bytes: u64) -> Resolver {
        self.max_download = bytes;
        self
    }

    /// The real path of the file a plain `file` or `local` source names,
    /// once it is known to be readable here and not, by its name and
    /// permissions, key material.
    fn plain_file(&self, source: &Source) -> Result<PathBuf> {
        let (what, real) = match source {
            Source::File(rel) => (format!("project file {rel:?}"), self.confine.project_file(rel)?),
            Source::Local(p) => (format!("deployer file {p}"), self.confine.deployer_file(p)?),
            _ => return Err(Error::NotPlainFile { kind: source.kind() }),
        };
        match key_material::in_file_name(&real) {
            Some(why) => Err(Error::KeyMaterial { what, why }),
            None => Ok(real),
        }
    }

    /// Make the secrets the cluster lacks ([`SecretStore::ensure`]); a
    /// user's own CA (`etcd.caDir`, named by absolute path) is read only
    /// where local sources may be read.
    pub fn ensure_secrets(&self, cluster: &Cluster) -> Result<Made> {
        self.secrets.ensure(cluster)
    }

    /// Keep secrets in `dir` instead of `.kdeploy/secrets` below the
    /// project root (one PKI shared by several projects, or secrets on
    /// an encrypted mount).
    pub fn with_secrets(mut self, dir: impl Into<PathBuf>) -> Resolver {
        let dir = dir.into();
        self.confine = self.confine.keep_private(&dir);
        self.secrets = SecretStore::new(dir).confined(self.confine.clone());
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
        artifact::fetch_all(&self.getter(fetcher), artifacts, parallel, events)
    }

    /// Where artifacts come from, through `fetcher`.
    fn getter<'a>(&'a self, fetcher: &'a dyn Fetcher) -> artifact::Getter<'a> {
        artifact::Getter {
            store: &self.store,
            fetcher,
            downloads: self.downloads_dir(),
            confine: &self.confine,
            max_download: self.max_download,
        }
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
                Ok(ContentId::Secret { name: s.name.clone(), keyed: self.secrets.keyed_hash(&s.name)? })
            }
            Source::SecretFile(_) | Source::SecretCommand(_) => Ok(ContentId::Secret {
                name: source.secret_name().unwrap_or_default(),
                keyed: self.secrets.keyed_hash_of(&self.bytes(source)?),
            }),
            Source::File(_) | Source::Local(_) => {
                let real = self.plain_file(source)?;
                let (id, key) = self.hashed(&real)?;
                match key {
                    Some(why) => Err(Error::KeyMaterial { what: shown(source), why }),
                    None => Ok(id),
                }
            }
        }
    }

    /// Where a source's bytes can be read from: a file on this machine
    /// (streamed, never held whole in memory — binaries are tens of MB) or,
    /// for inline text, archive members and secrets, the bytes themselves.
    pub fn readable(&self, source: &Source) -> Result<Readable> {
        match source {
            Source::File(_) | Source::Local(_) => Ok(Readable::Path(self.plain_file(source)?)),
            Source::Artifact(a) if a.member.is_none() => {
                let blob = self.getter(&*self.fetcher).download_blob(a, &|_, _| {})?;
                Ok(Readable::Path(self.store.blob_path(&blob)))
            }
            Source::Text(_)
            | Source::Artifact(_)
            | Source::Secret(_)
            | Source::SecretFile(_)
            | Source::SecretCommand(_) => Ok(Readable::Bytes(self.bytes(source)?)),
        }
    }

    /// The bytes of a source; an artifact is taken from the store, fetched
    /// (and verified) first if absent. A secret's bytes: only for sending
    /// them to a node, never for printing.
    pub fn bytes(&self, source: &Source) -> Result<Vec<u8>> {
        match source {
            Source::Text(t) => Ok(t.as_bytes().to_vec()),
            Source::File(_) | Source::Local(_) => {
                let real = self.plain_file(source)?;
                let bytes = std::fs::read(&real)
                    .map_err(|e| Error::SourceRead { shown: shown(source), reason: e.to_string() })?;
                match key_material::in_content(&bytes) {
                    Some(why) => Err(Error::KeyMaterial { what: shown(source), why }),
                    None => Ok(bytes),
                }
            }
            Source::Secret(s) => self.secrets.read(&s.name),
            Source::SecretFile(p) => {
                let real = self.confine.user_file(p)?;
                read_secret_file(&real).map_err(|e| Error::SecretFile { path: p.clone(), reason: e.to_string() })
            }
            Source::SecretCommand(argv) => self.command_bytes(argv),
            Source::Artifact(a) => {
                let blob = self.getter(&*self.fetcher).download_blob(a, &|_, _| {})?;
                match &a.member {
                    None => self.store.read(&blob),
                    Some(m) => {
                        artifact::extract_member(&self.store.blob_path(&blob), m, self.max_download).map_err(|fault| {
                            Error::Artifact {
                                name: a.name.clone(),
                                fault: ArtifactFault::Member { member: m.clone(), fault },
                            }
                        })
                    }
                }
            }
        }
    }

    /// A `secretCommand`'s output: run the first time it is asked for
    /// (when the run allows commands), kept for the rest of the run.
    fn command_bytes(&self, argv: &[String]) -> Result<Vec<u8>> {
        let command = crate::schema::command_line(argv);
        if !self.allow_commands {
            return Err(Error::SecretCommandNotAllowed { command });
        }
        let mut done = self.command_output.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(bytes) = done.get(argv) {
            return Ok(bytes.clone());
        }
        let bytes = super::secret_command::run(argv, &self.project_root)
            .map_err(|reason| Error::SecretCommand { command, reason })?;
        done.insert(argv.to_vec(), bytes.clone());
        Ok(bytes)
    }

    /// Put a source's bytes into the store and name the blob (never a
    /// secret's: those stay out of the shared store).
    pub fn store_source(&self, source: &Source) -> Result<Digest> {
        if source.is_secret() {
            return Err(Error::SecretNotStored { shown: shown(source) });
        }
        self.store.put(&self.bytes(source)?)
    }
}

/// A source as messages name it (never its bytes).
fn shown(source: &Source) -> String {
    match source {
        Source::File(rel) => format!("project file {rel:?}"),
        Source::Local(p) => format!("deployer file {p}"),
        Source::SecretFile(p) => format!("secret file {p}"),
        Source::SecretCommand(argv) => format!("secret command `{}`", crate::schema::command_line(argv)),
        Source::Secret(s) => format!("secret {}", s.name),
        Source::Artifact(a) => format!("artifact {}", a.name),
        Source::Text(_) => "inline text".to_string(),
    }
}

/// The largest user's secret file read (keys, tokens and keystores are
/// kilobytes; it is held in memory and sent as one SSH upload).
pub(crate) const MAX_SECRET_FILE: u64 = 1 << 20;

fn read_secret_file(real: &Path) -> std::io::Result<Vec<u8>> {
    let mut out = Vec::new();
    std::fs::File::open(real)?.take(MAX_SECRET_FILE + 1).read_to_end(&mut out)?;
    if out.len() as u64 > MAX_SECRET_FILE {
        return Err(std::io::Error::other(format!("larger than {MAX_SECRET_FILE} bytes, too large for a secret")));
    }
    Ok(out)
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
            Readable::Path(p) => each_chunk(p, |c| h.update(c))?,
        }
        Ok(hex::encode(h.finalize()))
    }
}

/// Hand the bytes of the file `p` to `f`, a chunk at a time (binaries are
/// tens of MB: never read whole).
pub(super) fn each_chunk(p: &Path, mut f: impl FnMut(&[u8])) -> Result<()> {
    let mut file = open(p)?;
    let mut buf = vec![0u8; 256 * 1024];
    loop {
        let n = file.read(&mut buf).map_err(|e| unreadable(p, e))?;
        if n == 0 {
            return Ok(());
        }
        f(&buf[..n]);
    }
}

fn open(p: &Path) -> Result<std::fs::File> {
    std::fs::File::open(p).map_err(|e| unreadable(p, e))
}

fn unreadable(p: &Path, e: std::io::Error) -> Error {
    Error::DeployerFile {
        path: p.display().to_string(),
        fault: FileFault::Unreadable { real: None, reason: e.to_string() },
    }
}

/// blake3 and size of a file, streamed, and why it is key material if it
/// is (read once: binaries are tens of MB).
fn hash_file(p: &Path) -> Result<(ContentId, Option<&'static str>)> {
    let mut h = blake3::Hasher::new();
    let mut scan = key_material::Scan::default();
    let mut first = Vec::new();
    each_chunk(p, |c| {
        h.update(c);
        scan.update(c);
        if first.len() < 64 {
            first.extend_from_slice(&c[..c.len().min(64)]);
        }
    })?;
    let size = h.count();
    let key = match scan.found() {
        true => Some("holds a private key"),
        false if size <= 64 => key_material::in_content(&first),
        false => None,
    };
    Ok((ContentId::Blob { digest: Digest(*h.finalize().as_bytes()), size }, key))
}
