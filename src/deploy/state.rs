//! Reading a node's deployed state beyond `status`, and recording it at
//! commit. The node program keeps manifests and links but not phase
//! hashes — and a phase hash also covers hooks, checks and activation,
//! which no manifest shows. So each commit also writes
//! `/var/lib/kdeploy/generations/<N>/kdeploy-phases` (one
//! `name TAB hash TAB generation TAB active` line per phase), and a
//! changed node is read back with one command printing that record and the
//! manifest of every linked phase. (Better in the node program itself:
//! noted for the lead.)

use std::collections::BTreeMap;

use super::plan::{Deployed, RecordedPhase};
use crate::node::{Manifest, Node, NodeStatus};
use crate::store::Digest;
use crate::transport::shell_quote;

const RECORD: &str = "kdeploy-phases";

/// The node's generations directory, quoted for sh.
fn generations(node: &Node<'_>) -> String {
    shell_quote(&format!("{}/generations", node.root()))
}

/// The shell command printing the record of generation `current` and the
/// manifests of the linked phases, in `@`-headed sections (`gens`: see
/// [`generations`]).
fn read_command(gens: &str, status: &NodeStatus) -> String {
    let mut s = String::new();
    if let Some((n, _)) = &status.current {
        s += &format!("echo @record; cat {gens}/{n}/{RECORD} 2>/dev/null; ");
    }
    for (p, g) in &status.phases {
        let q = shell_quote(p);
        s += &format!("echo @manifest {q}; cat {gens}/{g}/{q}/manifest 2>/dev/null; ");
    }
    s + "true"
}

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
pub async fn read_deployed(node: &Node<'_>, status: &NodeStatus) -> Result<Deployed, crate::transport::Error> {
    let mut dep = Deployed {
        committed: status.current.clone(),
        next: status.next,
        links: status.phases.clone(),
        ..Default::default()
    };
    if status.current.is_none() && status.phases.is_empty() {
        return Ok(dep);
    }
    let out = node.host().exec(&read_command(&generations(node), status), None).await?;
    let (record, manifests) = parse_sections(&out.stdout_str());
    dep.recorded = parse_record(&record);
    for (p, text) in manifests {
        if let Ok(m) = Manifest::parse(&text) {
            dep.manifests.insert(p, m);
        }
    }
    Ok(dep)
}

/// Write the phase record of generation `gen` and commit it (one round trip).
pub async fn commit(
    node: &Node<'_>,
    gen: u64,
    node_hash: &Digest,
    phases: &BTreeMap<String, RecordedPhase>,
) -> Result<(), String> {
    let dir = format!("{}/{gen}", generations(node));
    let cmd = format!(
        "mkdir -p {dir} && cat > {dir}/{RECORD}.tmp && mv -f {dir}/{RECORD}.tmp {dir}/{RECORD} && {}",
        node.command(&["commit", &gen.to_string(), &node_hash.hex()])
    );
    let out = node.host().exec(&cmd, Some(render_record(phases).as_bytes())).await.map_err(|e| e.to_string())?;
    if out.success() {
        Ok(())
    } else {
        Err(format!("commit failed: {}", String::from_utf8_lossy(&out.stderr).trim()))
    }
}

/// The phase record of any generation (for `rollback`).
pub async fn read_record(node: &Node<'_>, gen: u64) -> Result<BTreeMap<String, RecordedPhase>, String> {
    let out = node
        .host()
        .exec(&format!("cat {}/{gen}/{RECORD}", generations(node)), None)
        .await
        .map_err(|e| e.to_string())?;
    if !out.success() {
        return Err(format!("generation {gen} has no phase record on {}", node.host().name()));
    }
    let lines: Vec<String> = out.stdout_str().lines().map(str::to_string).collect();
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
