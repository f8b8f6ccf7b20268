//! From the evaluator's JSON to typed closures. The fast path types the
//! whole document in one pass (no intermediate JSON tree: for 1000 nodes
//! that tree would cost more memory than the typed result). Only when that
//! fails is it parsed again node by node, to word the error with the node,
//! the phase by name, and the field path inside it.

use std::collections::BTreeMap;

use rayon::prelude::*;
use serde::Deserialize;

use super::Error;
use crate::schema::{Cluster, Node};

/// The schema version this engine understands.
pub const SCHEMA_VERSION: u32 = 1;

/// A cluster whose nodes are read separately (`N`: their raw form, or
/// `IgnoredAny` when they are read one at a time).
#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Top<N> {
    #[serde(default)]
    anchor: Option<String>,
    #[serde(default)]
    anchor_candidates: Vec<String>,
    #[serde(default)]
    anchor_pinned: bool,
    #[serde(default)]
    kubernetes_version: Option<String>,
    #[serde(default)]
    memberships: BTreeMap<String, crate::schema::Membership>,
    name: String,
    nodes: BTreeMap<String, N>,
    phase_order: Vec<String>,
    #[serde(default)]
    remove_node: Option<crate::schema::RemoveNode>,
    #[serde(default)]
    proxy: crate::schema::Proxy,
    schema_version: u32,
    #[serde(default)]
    settings: serde::de::IgnoredAny,
    #[serde(default)]
    transfer_cache: Option<String>,
    #[serde(default)]
    upgrade_phase_order: Vec<String>,
    warnings: Vec<String>,
}

/// Does this JSON look like a cluster value (has `schemaVersion` and `nodes`)?
pub fn is_cluster_json(json: &str) -> bool {
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Probe {
        schema_version: Option<serde::de::IgnoredAny>,
        nodes: Option<serde::de::IgnoredAny>,
    }
    matches!(serde_json::from_str::<Probe>(json), Ok(Probe { schema_version: Some(_), nodes: Some(_) }))
}

fn strip_position(msg: String) -> String {
    match msg.find(" at line ") {
        Some(i) => msg[..i].to_string(),
        None => msg,
    }
}

pub fn parse_cluster(json: &str) -> Result<Cluster, Error> {
    match serde_json::from_str::<Cluster>(json) {
        Ok(c) if c.schema_version == SCHEMA_VERSION => Ok(c),
        _ => Err(explain(json)),
    }
}

/// The slow path: find and describe what is wrong with a document that did
/// not parse as a cluster.
fn explain(json: &str) -> Error {
    match parse_by_node(json) {
        Err(e) => e,
        Ok(_) => Error::Schema,
    }
}

fn parse_by_node(json: &str) -> Result<Cluster, Error> {
    let de = &mut serde_json::Deserializer::from_str(json);
    let mut top: Top<serde_json::Value> = serde_path_to_error::deserialize(de)
        .map_err(|e| Error::Shape { path: e.path().to_string(), reason: strip_position(e.inner().to_string()) })?;
    if top.schema_version != SCHEMA_VERSION {
        return Err(Error::Version { found: top.schema_version });
    }
    let nodes: Vec<(String, Node)> = std::mem::take(&mut top.nodes)
        .into_par_iter()
        .map(|(name, raw)| parse_node(&name, raw).map(|n| (name, n)))
        .collect::<Result<_, _>>()?;
    Ok(top.with_nodes(nodes.into_iter().collect()))
}

impl<N> Top<N> {
    /// The cluster, with its nodes read.
    pub fn with_nodes(self, nodes: BTreeMap<String, Node>) -> Cluster {
        Cluster {
            anchor: self.anchor,
            anchor_candidates: self.anchor_candidates,
            anchor_pinned: self.anchor_pinned,
            kubernetes_version: self.kubernetes_version,
            memberships: self.memberships,
            name: self.name,
            nodes,
            phase_order: self.phase_order,
            remove_node: self.remove_node,
            proxy: self.proxy,
            schema_version: self.schema_version,
            settings: self.settings,
            transfer_cache: self.transfer_cache,
            upgrade_phase_order: self.upgrade_phase_order,
            warnings: self.warnings,
        }
    }
}

fn parse_node(name: &str, raw: serde_json::Value) -> Result<Node, Error> {
    // Kept for the error path only: naming the phase needs the raw value.
    let phases_names: Vec<String> = raw
        .get("phases")
        .and_then(|p| p.as_array())
        .map(|ps| ps.iter().map(|p| p.get("name").and_then(|n| n.as_str()).unwrap_or("?").to_string()).collect())
        .unwrap_or_default();
    serde_path_to_error::deserialize(raw).map_err(|e| {
        let path = e.path().to_string();
        let reason = strip_position(e.inner().to_string());
        Error::Node { node: name.to_string(), at: describe_path(&phases_names, &path), reason }
    })
}

/// `phases[3].files[0].mode` → `, phase etcd (phases[3]), files[0].mode`.
fn describe_path(phase_names: &[String], path: &str) -> String {
    if path == "." || path.is_empty() {
        return String::new();
    }
    let phase = path.strip_prefix("phases[").and_then(|rest| {
        let end = rest.find(']')?;
        let idx: usize = rest[..end].parse().ok()?;
        let name = phase_names.get(idx)?.clone();
        Some((name, rest[end + 1..].trim_start_matches('.').to_string()))
    });
    match phase {
        Some((name, rest)) if rest.is_empty() => format!(", phase {name}"),
        Some((name, rest)) => format!(", phase {name}, {rest}"),
        None => format!(", {path}"),
    }
}
