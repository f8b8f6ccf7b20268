//! Human and JSON views of hashed closures for `kdeploy eval`: per node,
//! its phases with short hashes and what each holds; `--closures` as JSON
//! with full hashes (contents by hash, never inline, so secrets and large
//! texts stay out); and finding one generated file for `--file`.

use std::collections::HashMap;
use std::fmt::Write as _;

use rayon::prelude::*;
use serde_json::{json, Value as Json};

use crate::closure::{Closures, Node, NodeClosure, Phase, PhaseClosure, Source};
use crate::store::ContentId;

fn size_of(c: &ContentId, s: &Source) -> String {
    match (c.size(), s) {
        (Some(n), _) => format!("{n} B"),
        (None, Source::Artifact(a)) => format!("artifact {}", a.name),
        (None, s) if s.is_secret() => format!("secret {}", s.secret_name().unwrap_or_else(|| "?".into())),
        (None, _) => "?".into(),
    }
}

fn selected<'a>(
    c: &'a Closures,
    node: Option<&'a str>,
) -> impl Iterator<Item = (&'a String, &'a Node, &'a NodeClosure)> {
    c.cluster
        .nodes
        .iter()
        .filter(move |(n, _)| node.is_none_or(|want| want == n.as_str()))
        .map(|(n, node)| (n, node, &c.nodes[n]))
}

pub fn text(c: &Closures, node: Option<&str>) -> String {
    let mut o = String::new();
    let cl = &c.cluster;
    let _ = writeln!(o, "cluster {}: {} nodes, phases {}", cl.name, cl.nodes.len(), cl.phase_order.join(" → "));
    for w in &cl.warnings {
        let _ = writeln!(o, "warning: {w}");
    }
    // Nodes rendered in parallel and joined in order; what a phase holds
    // reads the same on every node that shares it (each worker keeps the
    // lines of the phases it rendered).
    let nodes: Vec<(&String, &Node, &NodeClosure)> = selected(c, node).collect();
    let texts: Vec<String> = nodes
        .par_iter()
        .map_init(HashMap::new, |bodies: &mut HashMap<usize, String>, (name, n, nc)| {
            let mut o = String::new();
            let _ = writeln!(o, "\nnode {name} {} [{}] {}", n.address, n.roles.join(", "), nc.hash.short());
            for (p, pc) in n.phases.iter().zip(&nc.phases) {
                let empty = p.files.is_empty()
                    && p.directories.is_empty()
                    && p.units.is_empty()
                    && p.hooks.is_empty()
                    && p.checks.is_empty();
                let note = if empty {
                    " (empty)"
                } else if !p.activate {
                    " (generated, not activated)"
                } else {
                    ""
                };
                let _ = writeln!(o, "  {} {}{note}", pc.hash.short(), p.name);
                o.push_str(bodies.entry(p.addr()).or_insert_with(|| phase_body(p, pc)));
            }
            o
        })
        .collect();
    o.reserve(texts.iter().map(String::len).sum());
    texts.iter().for_each(|t| o.push_str(t));
    o
}

/// The lines of one phase below its hash: files, directories, units,
/// hooks, checks.
fn phase_body(p: &Phase, pc: &PhaseClosure) -> String {
    let mut o = String::new();
    for (f, cid) in p.files.iter().zip(&pc.files) {
        let _ = writeln!(o, "      file  {} {} {}", f.path, f.mode, size_of(cid, &f.source));
    }
    for d in &p.directories {
        let _ = writeln!(o, "      dir   {} {}", d.path, d.mode);
    }
    for u in &p.units {
        let en = if u.enable { ", enabled" } else { "" };
        let _ = writeln!(o, "      unit  {} (on change: {}{en})", u.name, u.on_change.as_str());
    }
    for h in &p.hooks {
        let guard = if h.unless.is_some() { ", guarded" } else { "" };
        let _ = writeln!(o, "      hook  {} ({}{guard})", h.name, h.when.as_str());
    }
    for k in &p.checks {
        let _ = writeln!(o, "      check {} ({} × {}s)", k.name, k.retries, k.delay);
    }
    o
}

pub fn json(c: &Closures, node: Option<&str>) -> Json {
    let nodes: serde_json::Map<String, Json> = selected(c, node)
        .map(|(name, n, nc)| {
            let phases: Vec<Json> = n
                .phases
                .iter()
                .zip(&nc.phases)
                .map(|(p, pc)| {
                    json!({
                        "name": p.name,
                        "hash": pc.hash,
                        "activate": p.activate,
                        "files": p.files.iter().zip(&pc.files).map(|(f, cid)| json!({
                            "path": f.path, "mode": f.mode, "owner": f.owner, "group": f.group,
                            "source": f.source.kind(), "content": cid.canonical(), "size": cid.size(),
                        })).collect::<Vec<_>>(),
                        "directories": p.directories,
                        "units": p.units.iter().zip(&pc.units).map(|(u, d)| json!({
                            "name": u.name, "onChange": u.on_change, "enable": u.enable,
                            "restartTriggers": u.restart_triggers, "text": format!("blake3:{}", d.hex()),
                        })).collect::<Vec<_>>(),
                        "hooks": p.hooks,
                        "checks": p.checks,
                    })
                })
                .collect();
            (
                name.clone(),
                json!({ "address": n.address, "roles": n.roles, "ssh": n.ssh, "hash": nc.hash, "phases": phases }),
            )
        })
        .collect();
    json!({
        "name": c.cluster.name,
        "schemaVersion": c.cluster.schema_version,
        "phaseOrder": c.cluster.phase_order,
        "warnings": c.cluster.warnings,
        "nodes": nodes,
    })
}

/// The source that generates `path` on `node`: a file of one of its
/// phases, or a unit installed as `/etc/systemd/system/<name>`.
pub fn find_file(c: &Closures, node: &str, path: &str) -> Result<Source, String> {
    let n = c.cluster.nodes.get(node).ok_or_else(|| {
        format!("no node {node:?} (nodes: {})", c.cluster.nodes.keys().cloned().collect::<Vec<_>>().join(", "))
    })?;
    for p in &n.phases {
        if let Some(f) = p.files.iter().find(|f| f.path == path) {
            return Ok(f.source.clone());
        }
        if let Some(u) = p.units.iter().find(|u| Some(u.name.as_str()) == path.strip_prefix("/etc/systemd/system/")) {
            return Ok(Source::Text(u.text.clone()));
        }
    }
    Err(format!("node {node} has no file {path}"))
}
