//! From a closure phase to the manifest the node program stages: every file
//! with the blake3 of its content (the store blob), every directory, and
//! every unit twice — as an ordinary file under `/etc/systemd/system` (so a
//! unit file switches with its phase, like any other file) and as a `u`
//! line carrying what `node::plan` needs to decide restarts; and the
//! phase's reset hooks, so a node can be reset from what it runs.

use std::path::PathBuf;

use crate::closure::{OnChange as ClosureOnChange, Phase, PhaseClosure, When};
use crate::node::manifest::{ResetHook, UNIT_DIR};
use crate::node::{DirEntry, FileEntry, Manifest, OnChange, UnitSpec};
use crate::store::Digest;

/// The manifest of `phase`; `file_blobs` is the blob of each of its files
/// (same order as `phase.files`; artifacts already resolved to their blob).
pub fn phase_manifest(phase: &Phase, closure: &PhaseClosure, file_blobs: &[Digest]) -> Manifest {
    let mut m = Manifest::default();
    for d in &phase.directories {
        m.directories.push(DirEntry {
            path: d.path.clone(),
            mode: d.mode.clone(),
            owner: d.owner.clone(),
            group: d.group.clone(),
        });
    }
    for (f, b) in phase.files.iter().zip(file_blobs) {
        m.files.push(FileEntry {
            path: f.path.clone(),
            mode: f.mode.clone(),
            owner: f.owner.clone(),
            group: f.group.clone(),
            hash: *b,
        });
    }
    for h in phase.hooks.iter().filter(|h| h.when == When::Reset) {
        m.resets.push(ResetHook {
            name: h.name.clone(),
            run: h.run.to_string(),
            unless: h.unless.clone(),
            delegate: h.delegate.clone(),
        });
    }
    for (u, text) in phase.units.iter().zip(&closure.units) {
        m.files.push(FileEntry {
            path: unit_path(&u.name),
            mode: "0644".into(),
            owner: "root".into(),
            group: "root".into(),
            hash: *text,
        });
        m.units.push(UnitSpec {
            name: u.name.clone(),
            text_hash: *text,
            on_change: match u.on_change {
                ClosureOnChange::Restart => OnChange::Restart,
                ClosureOnChange::Reload => OnChange::Reload,
                ClosureOnChange::None => OnChange::Nothing,
            },
            enable: u.enable,
            restart_triggers: u.restart_triggers.iter().map(PathBuf::from).collect(),
        });
    }
    m
}

pub fn unit_path(name: &str) -> String {
    format!("{UNIT_DIR}/{name}")
}
