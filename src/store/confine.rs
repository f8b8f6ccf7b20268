//! Where the deployer may read a file a cluster names: one rule for every
//! kind of source that reads the deployer's files — `file` (relative to
//! the project root), `local` and `file://` artifacts (absolute), a
//! `secretFile` (either) and a user's own CA (absolute). The cluster file
//! chooses what to read, so it cannot be what allows it: absolute paths
//! only below the project root, the system's binary directories
//! ([`DEFAULT_LOCAL_DIRS`]) and the directories the user names
//! (`--allow-local DIR`, `KDEPLOY_ALLOW_LOCAL`); relative ones only below
//! the project root; symlinks resolved before the check, as the evaluator
//! confines what it reads. Never kdeploy's private state — any `.kdeploy`
//! directory (stores and secret store) and the `--secrets` directory —
//! whose secrets leave the deployer only as the secrets the engine sends,
//! and never a file that is not a regular file (a device, a FIFO).

use std::path::{Component, Path, PathBuf};

use super::{project_file_path, Error, FileFault, Result};

/// Where `local` sources may be read from besides the project root and
/// the directories the user names: where packages put binaries (the lab
/// takes Debian's etcd, containerd and runc from /usr/bin and /usr/sbin).
/// Never /etc, /root or /home: that is where a deployer keeps secrets.
pub const DEFAULT_LOCAL_DIRS: &[&str] = &[
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

/// The directory of kdeploy's private state below a project root (the
/// blob store, the secret store, generation records).
pub const PRIVATE_DIR: &str = ".kdeploy";

/// The directories one run may read user files from, and those it never reads.
#[derive(Debug, Clone)]
pub struct Confinement {
    /// Where relative (`file`) paths live; `None`: no project (only
    /// absolute paths, below the system's directories).
    project_root: Option<PathBuf>,
    /// Where absolute paths may lie (as given; resolved when used).
    local_dirs: Vec<PathBuf>,
    /// Never read as a user file, even below an allowed directory.
    private: Vec<PathBuf>,
}

impl Confinement {
    /// A project's: its root, the system's binary directories; its
    /// `.kdeploy` kept private.
    pub fn new(project_root: impl Into<PathBuf>) -> Confinement {
        let root = project_root.into();
        let local_dirs = std::iter::once(root.clone()).chain(DEFAULT_LOCAL_DIRS.iter().map(PathBuf::from)).collect();
        Confinement { private: vec![root.join(PRIVATE_DIR)], project_root: Some(root), local_dirs }
    }

    /// No project: absolute paths below the system's binary directories only.
    pub fn system() -> Confinement {
        Confinement {
            project_root: None,
            local_dirs: DEFAULT_LOCAL_DIRS.iter().map(PathBuf::from).collect(),
            private: vec![],
        }
    }

    /// Also read absolute paths below these directories.
    pub fn allow(mut self, dirs: impl IntoIterator<Item = PathBuf>) -> Confinement {
        self.local_dirs.extend(dirs);
        self
    }

    /// Never read below `dir` (a secret store elsewhere).
    pub fn keep_private(mut self, dir: impl Into<PathBuf>) -> Confinement {
        self.private.push(dir.into());
        self
    }

    /// A user's file: relative, a file of the project; absolute, a file of
    /// the deployer.
    pub fn user_file(&self, p: &str) -> Result<PathBuf> {
        if p.starts_with('/') {
            self.deployer_file(p)
        } else {
            self.project_file(p)
        }
    }

    /// The real path of a project file, once it is known to stay below the
    /// root and out of kdeploy's private state.
    pub fn project_file(&self, rel: &str) -> Result<PathBuf> {
        let Some(root) = &self.project_root else {
            return Err(Error::ProjectFile { rel: rel.to_string(), fault: FileFault::NoProject });
        };
        let real = project_file_path(root, rel)?;
        self.not_private(&format!("project file {rel:?}"), &real)?;
        Ok(real)
    }

    /// The real path of the deployer file `p` names, once it is known to be a
    /// regular file below one of [`Confinement::local_dirs`] (symlinks
    /// resolved first, as the evaluator does for project files) and out of
    /// kdeploy's private state.
    pub fn deployer_file(&self, p: &str) -> Result<PathBuf> {
        if !Path::new(p).is_absolute() {
            return Err(Error::DeployerNotAbsolute { path: p.to_string() });
        }
        let fault = |why| Error::DeployerFile { path: p.to_string(), fault: why };
        let real =
            std::fs::canonicalize(p).map_err(|e| fault(FileFault::Unreadable { real: None, reason: e.to_string() }))?;
        // Resolved too: `/bin` may be a link to `/usr/bin`, the root `.`.
        let dirs: Vec<PathBuf> = self.local_dirs.iter().map(|d| resolved(d)).collect();
        if !dirs.iter().any(|d| real.starts_with(d)) {
            let mut shown: Vec<String> = Vec::new();
            for d in dirs.iter().map(|d| d.display().to_string()) {
                if !shown.contains(&d) {
                    shown.push(d);
                }
            }
            let real = (real != Path::new(p)).then(|| real.clone());
            return Err(fault(FileFault::NotAllowed { real, dirs: shown }));
        }
        self.not_private(&format!("deployer file {p}{}", resolves_to(p, &real)), &real)?;
        if !real.is_file() {
            return Err(fault(FileFault::NotAFile { real: None }));
        }
        Ok(real)
    }

    /// Refuse `real` when it lies in kdeploy's private state.
    fn not_private(&self, what: &str, real: &Path) -> Result<()> {
        let in_state = real.components().any(|c| c == Component::Normal(PRIVATE_DIR.as_ref()));
        let private = self.private.iter().map(|d| resolved(d)).find(|d| real.starts_with(d));
        if in_state || private.is_some() {
            return Err(Error::Private {
                what: what.to_string(),
                dir: private.map_or(PRIVATE_DIR.to_string(), |d| d.display().to_string()),
            });
        }
        Ok(())
    }
}

/// ` (resolves to R)` when `p` is a link elsewhere.
fn resolves_to(p: &str, real: &Path) -> String {
    if real == Path::new(p) {
        String::new()
    } else {
        format!(" (resolves to {})", real.display())
    }
}

fn resolved(d: &Path) -> PathBuf {
    std::fs::canonicalize(d).unwrap_or_else(|_| d.to_path_buf())
}
