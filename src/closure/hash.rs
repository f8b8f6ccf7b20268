//! Canonical encodings and hashes. A phase is encoded as compact JSON with
//! sorted keys in which every content (file, unit text, restart trigger)
//! appears as its `ContentId` string, never as bytes or as the deployer
//! path it came from — so the hash is the same on any machine that has the
//! same contents. The phase hash is blake3 of that encoding; the node hash
//! is blake3 over (phase name, phase hash) in phase order.
//!
//! A unit's restart triggers carry the content of the trigger files: a new
//! etcd binary (download phase) changes the etcd phase's hash, which is
//! how the engine knows the etcd phase — and the unit — must be redone.

use std::collections::HashMap;

use serde::Serialize;

use crate::schema::{Check, Directory, Hook, OnChange, Phase};
use crate::store::{ContentId, Digest};

/// Bumped whenever the encoding changes, so old and new hashes never meet.
const ENCODING_VERSION: u32 = 1;

// Field order is alphabetical: serde_json writes struct fields in
// declaration order, and the encoding promises sorted keys.
#[derive(Serialize)]
struct CanonPhase<'a> {
    activate: bool,
    checks: &'a [Check],
    directories: &'a [Directory],
    files: Vec<CanonFile<'a>>,
    hooks: &'a [Hook],
    name: &'a str,
    units: Vec<CanonUnit<'a>>,
    v: u32,
}

#[derive(Serialize)]
struct CanonFile<'a> {
    content: String,
    group: &'a str,
    mode: &'a str,
    owner: &'a str,
    path: &'a str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct CanonUnit<'a> {
    enable: bool,
    name: &'a str,
    on_change: OnChange,
    restart_triggers: Vec<CanonTrigger<'a>>,
    text: String,
}

#[derive(Serialize)]
struct CanonTrigger<'a> {
    content: String,
    path: &'a str,
}

/// The canonical encoding of one phase, given the content of each of its
/// files (same order as `phase.files`), the digest of each unit text, and
/// the content of every file of the node (for restart triggers).
pub fn encode_phase(
    phase: &Phase,
    files: &[ContentId],
    unit_texts: &[Digest],
    node_files: &HashMap<&str, &ContentId>,
) -> String {
    let canon = CanonPhase {
        activate: phase.activate,
        checks: &phase.checks,
        directories: &phase.directories,
        files: phase
            .files
            .iter()
            .zip(files)
            .map(|(f, c)| CanonFile {
                content: c.canonical(),
                group: &f.group,
                mode: &f.mode,
                owner: &f.owner,
                path: &f.path,
            })
            .collect(),
        hooks: &phase.hooks,
        name: &phase.name,
        units: phase
            .units
            .iter()
            .zip(unit_texts)
            .map(|(u, t)| CanonUnit {
                enable: u.enable,
                name: &u.name,
                on_change: u.on_change,
                restart_triggers: u
                    .restart_triggers
                    .iter()
                    .map(|p| CanonTrigger {
                        // Validation guarantees the trigger is a file of the node.
                        content: node_files.get(p.as_str()).map_or_else(String::new, |c| c.canonical()),
                        path: p,
                    })
                    .collect(),
                text: format!("blake3:{}", t.hex()),
            })
            .collect(),
        v: ENCODING_VERSION,
    };
    serde_json::to_string(&canon).expect("closure encodings serialise")
}

pub fn phase_hash(encoding: &str) -> Digest {
    Digest::of(encoding.as_bytes())
}

pub fn node_hash<'a>(phases: impl IntoIterator<Item = (&'a str, Digest)>) -> Digest {
    let mut h = blake3::Hasher::new();
    h.update(format!("kdeploy-node-v{ENCODING_VERSION}\0").as_bytes());
    for (name, d) in phases {
        // Length-prefixed so no two name sequences encode alike.
        h.update(&(name.len() as u64).to_le_bytes());
        h.update(name.as_bytes());
        h.update(&d.0);
    }
    Digest(*h.finalize().as_bytes())
}
