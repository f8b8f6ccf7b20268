//! Per-node closures: the evaluated cluster value turned into typed,
//! validated data (`crate::schema`, `parse`, `validate`) and then into hashes
//! (`hash`, `build`) — a Merkle tree of node → phases → contents. The
//! engine knows the schema in `stdlib/README.md`, nothing about Kubernetes.
//! Entry point: `load` (JSON text → hashed closures); `error`: why a
//! closure cannot be built.

mod build;
mod error;
mod hash;
mod parse;
mod validate;

pub use crate::schema::{
    Artifact, CaSpec, CertSpec, Check, Cluster, Directory, File, Hook, Make, Node, OnChange, Phase, Secret, Source,
    Ssh, Unit, When,
};
pub use build::{build, Closures, NodeClosure, PhaseClosure};
pub use error::{Error, Unreadable};
pub use hash::phase_hash;
pub use parse::{is_cluster_json, parse_cluster, Top, SCHEMA_VERSION};
pub use validate::{is_clean_absolute, is_octal_mode, validate};

use crate::store::Resolver;

/// Parse, validate and hash a cluster value given as the evaluator's JSON.
pub fn load(json: &str, resolver: &Resolver) -> Result<Closures, Error> {
    let cluster = parse_cluster(json)?;
    validate(&cluster)?;
    build(cluster, resolver)
}
