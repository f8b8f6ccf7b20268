//! The one I/O boundary of the evaluator. Files are read only below the
//! project roots and from the stdlib (embedded in the binary or, for
//! development, a directory); nothing else on the machine is visible, and
//! no environment, clock or network exists for the language. Below the
//! roots, kdeploy's private state is not visible either: no path through a
//! `.kdeploy` directory (the blob store and the secret store, whose keys
//! must never become values a cluster could put in a file) nor below a
//! directory the front end hides (`Session::hide`: a secret store kept
//! elsewhere) is read, listed or even tested for existence — judged on
//! the real path, after symlinks. The process's own size (for the memory
//! budget of `limits.rs`) is read here too.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::error::{ErrorExt, ErrorKind, EvalError, EvalResult};
use crate::observed::{Answer, Observation, Op};
use crate::path::STDLIB_ROOT;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
pub enum FileKind {
    Regular,
    Directory,
    Symlink,
    Unknown,
}

impl FileKind {
    pub fn nix_name(self) -> &'static str {
        match self {
            FileKind::Regular => "regular",
            FileKind::Directory => "directory",
            FileKind::Symlink => "symlink",
            FileKind::Unknown => "unknown",
        }
    }
}

/// Where `<kdeploy>` comes from.
pub enum Stdlib {
    /// Files by path relative to the stdlib root, compiled into the binary.
    Embedded(BTreeMap<String, &'static [u8]>),
    Dir(PathBuf),
    Absent,
}

pub struct Io {
    roots: Vec<PathBuf>,
    stdlib: Stdlib,
    /// Never read, even below a root (canonical).
    hidden: Vec<PathBuf>,
    /// What was asked and answered, once [`Io::observe`] is called.
    observed: Option<RefCell<Vec<Observation>>>,
}

/// kdeploy's private state below a project (stores, secrets): never read.
pub const PRIVATE_DIR: &str = ".kdeploy";

fn forbidden(path: &str, roots: &[PathBuf]) -> Box<EvalError> {
    let allowed: Vec<String> = roots.iter().map(|r| r.display().to_string()).collect();
    EvalError::new(ErrorKind::Forbidden, format!("access to '{path}' is not allowed: it is outside the project")).help(
        format!(
            "evaluation is pure: only files below {} and <kdeploy> can be read (set --root to widen)",
            allowed.join(", ")
        ),
    )
}

fn private(path: &str, dir: &Path) -> Box<EvalError> {
    EvalError::new(ErrorKind::Forbidden, format!("access to '{path}' is not allowed: it is in kdeploy's private state"))
        .help(format!(
            "{} holds the deployer's stores and secrets, which evaluation never reads; \
             a cluster names a secret by its file (a `secretFile` source), never by its value",
            dir.display()
        ))
}

/// The usual causes in words of their own, without the OS's error number.
fn io_error(path: &str, e: std::io::Error) -> Box<EvalError> {
    let what = match e.kind() {
        std::io::ErrorKind::NotFound => "no such file or directory".to_string(),
        std::io::ErrorKind::NotADirectory => "not a directory".to_string(),
        std::io::ErrorKind::IsADirectory => "it is a directory".to_string(),
        std::io::ErrorKind::PermissionDenied => "permission denied".to_string(),
        _ => e.to_string(),
    };
    EvalError::new(ErrorKind::Io, format!("cannot read '{path}': {what}"))
}

impl Io {
    /// `roots` are made absolute and canonical; symlinks cannot escape them.
    pub fn new(roots: Vec<PathBuf>, stdlib: Stdlib) -> Io {
        let roots = roots.into_iter().map(|r| r.canonicalize().unwrap_or(r)).collect();
        Io { roots, stdlib, hidden: Vec::new(), observed: None }
    }

    /// From here on, keep every question and its answer (for an
    /// evaluation cache: `observed.rs`).
    pub fn observe(&mut self) {
        self.observed.get_or_insert_with(Default::default);
    }

    /// What was asked since [`Io::observe`], in order.
    pub fn observed(&self) -> Vec<Observation> {
        self.observed.as_ref().map_or(vec![], |o| o.borrow().clone())
    }

    /// Adds what another evaluator of the same run saw (a helper's), when
    /// observing.
    pub fn add_observed(&self, more: Vec<Observation>) {
        if let Some(observed) = &self.observed {
            observed.borrow_mut().extend(more);
        }
    }

    /// Kept when observing, unless it is the embedded stdlib's (the
    /// binary's own, which a cache key names).
    fn note(&self, op: Op, path: &str, answer: impl FnOnce() -> Answer) {
        let Some(observed) = &self.observed else { return };
        if Self::stdlib_rel(path).is_some() && matches!(self.stdlib, Stdlib::Embedded(_)) {
            return;
        }
        observed.borrow_mut().push(Observation { op, path: path.to_string(), answer: answer() });
    }

    /// Never read below `dir`, even where it lies below a root.
    pub fn hide(&mut self, dir: &Path) {
        self.hidden.push(dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf()));
    }

    /// Resolves a real path, refusing anything outside the roots.
    fn check(&self, path: &str) -> EvalResult<PathBuf> {
        let p = Path::new(path);
        // A missing file is judged by its nearest existing ancestor.
        let mut probe = p.to_path_buf();
        let mut suffix = Vec::new();
        let canonical = loop {
            match probe.canonicalize() {
                Ok(c) => break c,
                Err(_) => match (probe.file_name().map(|s| s.to_os_string()), probe.parent()) {
                    (Some(name), Some(parent)) => {
                        suffix.push(name);
                        probe = parent.to_path_buf();
                    }
                    _ => return Err(forbidden(path, &self.roots)),
                },
            }
        };
        let Some(root) = self.roots.iter().find(|r| canonical.starts_with(r)) else {
            return Err(forbidden(path, &self.roots));
        };
        let mut full = canonical.clone();
        for s in suffix.into_iter().rev() {
            full.push(s);
        }
        // the part below the root (a root may itself lie anywhere)
        let below = full.strip_prefix(root).unwrap_or(&full);
        if let Some(i) = below.components().position(|c| c.as_os_str() == PRIVATE_DIR) {
            let dir: PathBuf = root.join(below.components().take(i + 1).collect::<PathBuf>());
            return Err(private(path, &dir));
        }
        if let Some(dir) = self.hidden.iter().find(|h| full.starts_with(h)) {
            return Err(private(path, dir));
        }
        Ok(full)
    }

    fn stdlib_rel(path: &str) -> Option<&str> {
        path.strip_prefix(STDLIB_ROOT).map(|r| r.trim_start_matches('/'))
    }

    pub fn read(&self, path: &str) -> EvalResult<Vec<u8>> {
        let r = self.read_unobserved(path);
        self.note(Op::Read, path, || Answer::of_bytes(&r));
        r
    }

    pub fn kind(&self, path: &str) -> EvalResult<Option<FileKind>> {
        let r = self.kind_unobserved(path);
        self.note(Op::Kind, path, || Answer::of_kind(&r));
        r
    }

    pub fn read_dir(&self, path: &str) -> EvalResult<Vec<(String, FileKind)>> {
        let r = self.read_dir_unobserved(path);
        self.note(Op::ReadDir, path, || Answer::of_entries(&r));
        r
    }

    pub(crate) fn read_unobserved(&self, path: &str) -> EvalResult<Vec<u8>> {
        if let Some(rel) = Self::stdlib_rel(path) {
            return match &self.stdlib {
                Stdlib::Embedded(files) => files
                    .get(rel)
                    .map(|b| b.to_vec())
                    .ok_or_else(|| io_error(path, std::io::Error::from(std::io::ErrorKind::NotFound))),
                Stdlib::Dir(dir) => std::fs::read(dir.join(rel)).map_err(|e| io_error(path, e)),
                Stdlib::Absent => Err(io_error(path, std::io::Error::from(std::io::ErrorKind::NotFound))),
            };
        }
        let real = self.check(path)?;
        std::fs::read(real).map_err(|e| io_error(path, e))
    }

    pub(crate) fn kind_unobserved(&self, path: &str) -> EvalResult<Option<FileKind>> {
        if let Some(rel) = Self::stdlib_rel(path) {
            return Ok(match &self.stdlib {
                Stdlib::Embedded(files) => {
                    if files.contains_key(rel) {
                        Some(FileKind::Regular)
                    } else if rel.is_empty() || files.keys().any(|k| k.starts_with(&format!("{rel}/"))) {
                        Some(FileKind::Directory)
                    } else {
                        None
                    }
                }
                Stdlib::Dir(dir) => kind_of(&dir.join(rel)),
                Stdlib::Absent => None,
            });
        }
        let real = self.check(path)?;
        Ok(kind_of(&real))
    }

    pub(crate) fn read_dir_unobserved(&self, path: &str) -> EvalResult<Vec<(String, FileKind)>> {
        if let Some(rel) = Self::stdlib_rel(path) {
            return match &self.stdlib {
                Stdlib::Embedded(files) => {
                    let prefix = if rel.is_empty() { String::new() } else { format!("{rel}/") };
                    let mut out: BTreeMap<String, FileKind> = BTreeMap::new();
                    for k in files.keys() {
                        if let Some(rest) = k.strip_prefix(&prefix) {
                            match rest.split_once('/') {
                                Some((dir, _)) => out.insert(dir.to_string(), FileKind::Directory),
                                None => out.insert(rest.to_string(), FileKind::Regular),
                            };
                        }
                    }
                    Ok(out.into_iter().collect())
                }
                Stdlib::Dir(dir) => list_dir(path, &dir.join(rel)),
                Stdlib::Absent => Err(io_error(path, std::io::Error::from(std::io::ErrorKind::NotFound))),
            };
        }
        let real = self.check(path)?;
        list_dir(path, &real)
    }
}

fn kind_of(p: &Path) -> Option<FileKind> {
    let meta = std::fs::symlink_metadata(p).ok()?;
    let t = meta.file_type();
    Some(if t.is_symlink() {
        FileKind::Symlink
    } else if t.is_dir() {
        FileKind::Directory
    } else if t.is_file() {
        FileKind::Regular
    } else {
        FileKind::Unknown
    })
}

fn list_dir(shown: &str, p: &Path) -> EvalResult<Vec<(String, FileKind)>> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(p).map_err(|e| io_error(shown, e))? {
        let entry = entry.map_err(|e| io_error(shown, e))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        out.push((name, kind_of(&entry.path()).unwrap_or(FileKind::Unknown)));
    }
    out.sort();
    Ok(out)
}

/// The resident memory of this process in bytes (Linux: the second field
/// of `/proc/self/statm`, in pages; `statm` rather than `status`, which
/// costs the kernel ten times more to render), for the evaluation's memory
/// budget; `None` where it cannot be known, and then the budget is not
/// enforced.
pub(crate) fn resident_memory() -> Option<usize> {
    let text = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: usize = text.split_ascii_whitespace().nth(1)?.parse().ok()?;
    pages.checked_mul(page_size())
}

/// The size of a memory page (4 KiB unless the kernel says otherwise).
fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    match unsafe { libc::sysconf(libc::_SC_PAGESIZE) } {
        n if n > 0 => n as usize,
        _ => 4096,
    }
}

/// The machine's memory in bytes (`MemTotal` in `/proc/meminfo`).
pub(crate) fn physical_memory() -> Option<usize> {
    proc_field("/proc/meminfo", "MemTotal:")
}

/// A `Name:  1234 kB` line of a `/proc` file, in bytes.
fn proc_field(file: &str, name: &str) -> Option<usize> {
    let text = std::fs::read_to_string(file).ok()?;
    let line = text.lines().find_map(|l| l.strip_prefix(name))?;
    let kib: usize = line.trim().trim_end_matches("kB").trim().parse().ok()?;
    kib.checked_mul(1024)
}
