//! Reading a node's deployed state beyond `status`, and recording it at
//! commit. The node program keeps manifests and links but not phase
//! hashes — and a phase hash also covers hooks, checks and activation,
//! which no manifest shows. So each commit also hands the node program the
//! phase record (`generations/<N>/kdeploy-phases`, one
//! `name TAB hash TAB generation TAB active` line per phase), and a
//! changed node is read back with the node program's `state`: that record
//! and the manifest of every linked phase, in one round trip.

use std::collections::BTreeMap;

use super::plan::RecordedPhase;
use super::plan_switch::Deployed;
use crate::node::{Manifest, Node, NodeStatus};
use crate::store::Digest;

/// Parse `@record` / `@manifest PHASE` sections.
fn parse_sections(text: &str) -> (Vec<String>, BTreeMap<String, String>) {
    let mut record = Vec::new();
    let mut manifests: BTreeMap<String, String> = BTreeMap::new();
    let mut cur: Option<Option<String>> = None;
    for line in text.lines() {
        if line == "@record" {
            cur = Some(None);
        } else if let Some(p) = line.strip_prefix("@manifest ") {
            cur = Some(Some(p.to_string()));
            manifests.insert(p.to_string(), String::new());
        } else {
            match &cur {
                Some(None) => record.push(line.to_string()),
                Some(Some(p)) => {
                    let m = manifests.get_mut(p).expect("inserted at header");
                    m.push_str(line);
                    m.push('\n');
                }
                None => {}
            }
        }
    }
    (record, manifests)
}

pub fn parse_record(lines: &[String]) -> BTreeMap<String, RecordedPhase> {
    let mut out = BTreeMap::new();
    for l in lines {
        let f: Vec<&str> = l.split('\t').collect();
        if let [name, hash, gen, active] = f.as_slice() {
            if let (Some(hash), Ok(generation)) = (Digest::parse(hash), gen.parse()) {
                out.insert(name.to_string(), RecordedPhase { hash, generation, active: *active == "1" });
            }
        }
    }
    out
}

pub fn render_record(phases: &BTreeMap<String, RecordedPhase>) -> String {
    phases.iter().map(|(n, r)| format!("{n}\t{}\t{}\t{}\n", r.hash.hex(), r.generation, r.active as u8)).collect()
}

/// Everything the plan needs from a node whose committed hash differs
/// (one round trip). A manifest that cannot be read or parsed is left
/// out: the phase is then planned as if new (all its units started).
pub async fn read_deployed(node: &Node<'_>, status: &NodeStatus) -> Result<Deployed, crate::node::NodeError> {
    let mut dep = Deployed {
        committed: status.current,
        next: status.next,
        links: status.phases.clone(),
        drift: status.drift.clone(),
        ..Default::default()
    };
    if status.current.is_none() && status.phases.is_empty() {
        return Ok(dep);
    }
    let (record, manifests) = parse_sections(&node.state().await?);
    dep.recorded = parse_record(&record);
    for (p, text) in manifests {
        if let Ok(m) = Manifest::parse(&text) {
            dep.manifests.insert(p, m);
        }
    }
    Ok(dep)
}

/// Commit generation `gen` with its phase record (`None`: the generation
/// keeps the record it was committed with before).
pub async fn commit(
    node: &Node<'_>,
    gen: u64,
    node_hash: &Digest,
    phases: Option<&BTreeMap<String, RecordedPhase>>,
) -> Result<(), String> {
    let record = phases.map(render_record).unwrap_or_default();
    node.commit(gen, node_hash, record.as_bytes()).await.map_err(|e| e.to_string())
}

/// The phase record of any generation (for `rollback`).
pub async fn read_record(node: &Node<'_>, gen: u64) -> Result<BTreeMap<String, RecordedPhase>, String> {
    let text = node.phase_record(gen).await.map_err(|e| e.to_string())?;
    let lines: Vec<String> = text.lines().map(str::to_string).collect();
    Ok(parse_record(&lines))
}
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn record_round_trip_and_sections() {
        let mut r = BTreeMap::new();
        r.insert("etcd".to_string(), RecordedPhase { hash: Digest([7; 32]), generation: 3, active: true });
        r.insert("kubelet".to_string(), RecordedPhase { hash: Digest([8; 32]), generation: 2, active: false });
        let text = render_record(&r);
        let lines: Vec<String> = text.lines().map(str::to_string).collect();
        assert_eq!(parse_record(&lines), r);
        let out = format!("@record\n{text}@manifest etcd\nkdeploy-manifest 1\n@manifest x\n");
        let (rec, ms) = parse_sections(&out);
        assert_eq!(rec.len(), 2);
        assert_eq!(ms["etcd"], "kdeploy-manifest 1\n");
        assert_eq!(ms["x"], "");
    }
}
