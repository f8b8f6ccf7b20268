//! Reading a `file` source: a path relative to the project root, which must
//! stay below it after symlinks are resolved — the same confinement the
//! evaluator applies, so a cluster cannot smuggle `/etc/shadow` or
//! `../../secrets` of another project into a closure.

use std::fs;
use std::path::{Component, Path, PathBuf};

use super::{Error, FileFault, Result};

pub fn read_project_file(root: &Path, rel: &str) -> Result<Vec<u8>> {
    let real = project_file_path(root, rel)?;
    fs::read(&real).map_err(|e| fault(rel, FileFault::Unreadable { real: Some(real.clone()), reason: e.to_string() }))
}

fn fault(rel: &str, fault: FileFault) -> Error {
    Error::ProjectFile { rel: rel.to_string(), fault }
}

/// The real path of a project file, once it is known to stay below the root.
pub fn project_file_path(root: &Path, rel: &str) -> Result<PathBuf> {
    let relp = Path::new(rel);
    if rel.is_empty() || relp.is_absolute() {
        return Err(fault(rel, FileFault::NotRelative { root: root.to_path_buf() }));
    }
    // Refuse `..` outright even when it would land inside again: it never
    // appears in a sensible cluster and makes the check easy to trust.
    if relp.components().any(|c| matches!(c, Component::ParentDir)) {
        return Err(fault(rel, FileFault::Escapes { root: root.to_path_buf() }));
    }
    let root_real =
        fs::canonicalize(root).map_err(|e| Error::ProjectRoot { root: root.to_path_buf(), reason: e.to_string() })?;
    let full = root.join(relp);
    let real = fs::canonicalize(&full)
        .map_err(|e| fault(rel, FileFault::Unreadable { real: Some(full.clone()), reason: e.to_string() }))?;
    if !real.starts_with(&root_real) {
        return Err(fault(rel, FileFault::Outside { real, root: root_real }));
    }
    if !real.is_file() {
        return Err(fault(rel, FileFault::NotAFile { real: Some(full) }));
    }
    Ok(real)
}
