//! Per-node closures: the evaluated cluster value turned into typed,
//! validated data (`crate::schema`, `parse`, `validate`) and then into hashes
//! (`hash`, `build`) — a Merkle tree of node → phases → contents. The
//! engine knows the schema in `stdlib/README.md`, nothing about Kubernetes.
//! Entry point: `load` (JSON text → hashed closures).

mod build;
mod hash;
mod parse;
mod validate;

use std::fmt;

pub use crate::schema::{
    Artifact, CaSpec, CertSpec, Check, Cluster, Directory, File, Hook, Make, Node, OnChange, Phase, Secret, Source,
    Ssh, Unit, When,
};
pub use build::{build, Closures, NodeClosure, PhaseClosure};
pub use hash::phase_hash;
pub use parse::{is_cluster_json, parse_cluster, Top, SCHEMA_VERSION};
pub use validate::{is_clean_absolute, is_octal_mode, validate};

use crate::store::Resolver;

/// A closure that cannot be built, worded for the user (names the node,
/// phase and path concerned).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error(pub String);

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Error {}

/// Parse, validate and hash a cluster value given as the evaluator's JSON.
pub fn load(json: &str, resolver: &Resolver) -> Result<Closures, Error> {
    let cluster = parse_cluster(json)?;
    validate(&cluster)?;
    build(cluster, resolver)
}
