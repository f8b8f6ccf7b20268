//! Building hashed closures from a validated cluster: resolve the content
//! of every file source (each distinct project or deployer file is read
//! once, in parallel), then encode and hash every node's phases in
//! parallel, a phase many nodes share once. Reads files; writes nothing
//! and downloads nothing.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

use rayon::prelude::*;

use super::hash::{encode_phase, node_hash, phase_hash};
use super::{Error, Unreadable};
use crate::schema::{Cluster, Node, Phase, Source, Text};
use crate::store::{ContentId, Digest, Resolver};

/// A cluster with the hashes of every node and phase.
#[derive(Debug, Clone)]
pub struct Closures {
    pub cluster: Cluster,
    pub nodes: BTreeMap<String, NodeClosure>,
}

#[derive(Debug, Clone)]
pub struct NodeClosure {
    pub hash: Digest,
    /// Aligned with the node's `phases`.
    pub phases: Vec<PhaseClosure>,
}

#[derive(Debug, Clone)]
pub struct PhaseClosure {
    pub hash: Digest,
    /// Aligned with the phase's `files`.
    pub files: Vec<ContentId>,
    /// Digest of each unit's text, aligned with the phase's `units`.
    pub units: Vec<Digest>,
}

pub fn build(cluster: Cluster, resolver: &Resolver) -> Result<Closures, Error> {
    let external = resolve_external(&cluster, resolver)?;
    let texts = hash_texts(&cluster);
    // What a phase alone decides — the content of its files and unit
    // texts — once per shared phase (by allocation).
    let own: Mutex<HashMap<usize, Arc<PhaseContents>>> = Mutex::new(HashMap::new());
    let contents_of = |phase: &Phase| {
        if let Some(c) = own.lock().expect("no panics while held").get(&phase.addr()) {
            return c.clone();
        }
        let files = phase
            .files
            .iter()
            .map(|f| match &f.source {
                Source::Text(t) => ContentId::Blob { digest: texts[&t.addr()], size: t.len() as u64 },
                Source::Artifact(_) => resolver.content_id(&f.source).expect("artifacts need no I/O"),
                other => external[other].clone(),
            })
            .collect();
        let units = phase.units.iter().map(|u| texts[&u.text.addr()]).collect();
        let c = Arc::new(PhaseContents { files, units });
        own.lock().expect("no panics while held").insert(phase.addr(), c.clone());
        c
    };
    // A phase's hash depends on the phase and on the content of the files
    // its units' restart triggers name, which may be another phase's: one
    // encoding and hash per shared phase and trigger content.
    let hashed: Mutex<HashMap<HashKey, Digest>> = Mutex::new(HashMap::new());
    let nodes = cluster
        .nodes
        .par_iter()
        .map(|(name, node)| {
            let contents: Vec<Arc<PhaseContents>> = node.phases.iter().map(contents_of).collect();
            let files: Vec<&[ContentId]> = contents.iter().map(|c| &c.files[..]).collect();
            let node_files = node_files(node, &files);
            let mut phases = Vec::with_capacity(node.phases.len());
            for (phase, c) in node.phases.iter().zip(&contents) {
                let triggers = phase
                    .units
                    .iter()
                    .flat_map(|u| u.restart_triggers.iter().map(|t| node_files.get(t.as_str()).map(|c| (*c).clone())))
                    .collect();
                let key = (phase.addr(), triggers);
                let known = hashed.lock().expect("no panics while held").get(&key).copied();
                let hash = known.unwrap_or_else(|| {
                    let hash = phase_hash(&encode_phase(phase, &c.files, &c.units, &node_files));
                    hashed.lock().expect("no panics while held").insert(key, hash);
                    hash
                });
                phases.push(PhaseClosure { hash, files: c.files.clone(), units: c.units.clone() });
            }
            let hash = node_hash(node.phases.iter().map(|p| p.name.as_str()).zip(phases.iter().map(|p| p.hash)));
            (name.clone(), NodeClosure { hash, phases })
        })
        .collect::<Vec<_>>()
        .into_iter()
        .collect();
    Ok(Closures { cluster, nodes })
}

/// What a phase's hash depends on: the phase (its allocation) and the
/// content of the files its restart triggers name.
type HashKey = (usize, Vec<Option<ContentId>>);

/// The content of a phase's files and the digests of its unit texts.
struct PhaseContents {
    files: Vec<ContentId>,
    units: Vec<Digest>,
}

/// The digest of every distinct inline text (file contents and unit
/// texts), hashed in parallel: a text many nodes share is one allocation
/// (`schema::Text`), hashed once.
fn hash_texts(cluster: &Cluster) -> HashMap<usize, Digest> {
    let mut distinct: HashMap<usize, &Text> = HashMap::new();
    for node in cluster.nodes.values() {
        for phase in &node.phases {
            for f in &phase.files {
                if let Source::Text(t) = &f.source {
                    distinct.entry(t.addr()).or_insert(t);
                }
            }
            for u in &phase.units {
                distinct.entry(u.text.addr()).or_insert(&u.text);
            }
        }
    }
    distinct.into_par_iter().map(|(addr, t)| (addr, Digest::of(t.as_bytes()))).collect()
}

/// Every file of the node by path (restart triggers name files of other phases).
fn node_files<'a>(node: &'a Node, contents: &[&'a [ContentId]]) -> HashMap<&'a str, &'a ContentId> {
    node.phases.iter().zip(contents).flat_map(|(p, cs)| p.files.iter().map(|f| f.path.as_str()).zip(*cs)).collect()
}

impl Closures {
    /// The canonical encoding that phase `index` of `node`'s hash covers
    /// (recomputed: a thousand nodes' encodings are not worth keeping).
    pub fn encoding(&self, node: &str, index: usize) -> Option<String> {
        let (n, c) = (self.cluster.nodes.get(node)?, self.nodes.get(node)?);
        let contents: Vec<&[ContentId]> = c.phases.iter().map(|p| &p.files[..]).collect();
        let (phase, closure) = (n.phases.get(index)?, c.phases.get(index)?);
        Some(encode_phase(phase, &closure.files, &closure.units, &node_files(n, &contents)))
    }
}

/// Content ids of every distinct project/deployer file, read in parallel.
/// Errors name the first place each failing source is used.
fn resolve_external(cluster: &Cluster, resolver: &Resolver) -> Result<HashMap<Source, ContentId>, Error> {
    let mut first_use: HashMap<&Source, (String, usize)> = HashMap::new();
    for (name, node) in &cluster.nodes {
        for phase in &node.phases {
            for f in &phase.files {
                if matches!(
                    f.source,
                    Source::File(_)
                        | Source::Local(_)
                        | Source::Secret(_)
                        | Source::SecretFile(_)
                        | Source::SecretCommand(_)
                ) {
                    first_use
                        .entry(&f.source)
                        .or_insert_with(|| (format!("node {name}, phase {}, file {}", phase.name, f.path), 0))
                        .1 += 1;
                }
            }
        }
    }
    let results: Vec<(Source, Result<ContentId, crate::store::Error>)> =
        first_use.par_iter().map(|(s, _)| ((*s).clone(), resolver.content_id(s))).collect();
    let mut ok = HashMap::new();
    let mut errs: Vec<Unreadable> = Vec::new();
    for (s, r) in results {
        match r {
            Ok(c) => {
                ok.insert(s, c);
            }
            Err(error) => {
                let (at, uses) = &first_use[&s];
                errs.push(Unreadable { at: at.clone(), more: uses - 1, error });
            }
        }
    }
    if errs.is_empty() {
        return Ok(ok);
    }
    errs.sort_by_cached_key(ToString::to_string);
    Err(Error::Sources(errs))
}
