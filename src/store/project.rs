//! Reading a `file` source: a path relative to the project root, which must
//! stay below it after symlinks are resolved — the same confinement the
//! evaluator applies, so a cluster cannot smuggle `/etc/shadow` or
//! `../../secrets` of another project into a closure.

use std::fs;
use std::path::{Component, Path, PathBuf};

use super::{Error, Result};

pub fn read_project_file(root: &Path, rel: &str) -> Result<Vec<u8>> {
    let real = project_file_path(root, rel)?;
    fs::read(&real).map_err(|e| Error(format!("project file {rel:?} ({}): {e}", real.display())))
}

/// The real path of a project file, once it is known to stay below the root.
pub fn project_file_path(root: &Path, rel: &str) -> Result<PathBuf> {
    let relp = Path::new(rel);
    if rel.is_empty() || relp.is_absolute() {
        return Err(Error(format!(
            "project file {rel:?}: must be a path relative to the project root {}",
            root.display()
        )));
    }
    // Refuse `..` outright even when it would land inside again: it never
    // appears in a sensible cluster and makes the check easy to trust.
    if relp.components().any(|c| matches!(c, Component::ParentDir)) {
        return Err(Error(format!(
            "project file {rel:?}: escapes the project root {} ('..' is not allowed)",
            root.display()
        )));
    }
    let root_real = fs::canonicalize(root).map_err(|e| Error(format!("project root {}: {e}", root.display())))?;
    let full = root.join(relp);
    let real = fs::canonicalize(&full).map_err(|e| Error(format!("project file {rel:?} ({}): {e}", full.display())))?;
    if !real.starts_with(&root_real) {
        return Err(Error(format!(
            "project file {rel:?}: resolves to {}, outside the project root {}",
            real.display(),
            root_real.display()
        )));
    }
    if !real.is_file() {
        return Err(Error(format!("project file {rel:?} ({}): not a regular file", full.display())));
    }
    Ok(real)
}
