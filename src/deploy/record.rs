//! The deployer's history: `.kdeploy/generations/<N>.json`, one file per
//! successful switch or rollback, with the time and, per node, how to reach
//! it and the node generation and hash it was left on — all `rollback` and
//! `generations` need, with no evaluation.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::error::{RecordWrite, RecordsError, RollbackRefused};
use super::rollout::Rollout;

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeRecord {
    pub address: String,
    /// The cluster's `ssh.user` and `ssh.port` (null: ~/.ssh/config decides).
    pub user: Option<String>,
    pub port: Option<u16>,
    /// The cluster's `ssh.become`; absent in records from before it existed.
    #[serde(default, rename = "become", skip_serializing_if = "Option::is_none")]
    pub escalation: Option<crate::schema::Become>,
    pub key: Option<String>,
    /// `user@host:port` of the bastion, if the node was reached through one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jump_host: Option<String>,
    /// The node's roles (for `rollback --on ROLE`; empty in records from
    /// before they were kept).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub roles: Vec<String>,
    /// The node's tags (for `rollback --on @TAG`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    /// The generation the node was committed at.
    pub generation: u64,
    /// Node hash (blake3 hex).
    pub hash: String,
    /// How the node's disruptive steps were rationed; a rollback to this
    /// generation rations them the same way.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rollout: Option<Rollout>,
}

impl NodeRecord {
    /// How to reach the node again, in the closure's terms.
    pub fn ssh(&self) -> crate::schema::Ssh {
        crate::schema::Ssh {
            escalation: self.escalation.unwrap_or_default(),
            jump_host: self.jump_host.clone(),
            key: self.key.clone(),
            port: self.port,
            user: self.user.clone(),
        }
    }
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Generation {
    pub number: u64,
    pub cluster: String,
    /// Seconds since the Unix epoch.
    pub time: u64,
    pub phase_order: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rollback_of: Option<u64>,
    /// `kubernetes.version` of the cluster deployed (none: recorded before
    /// versions were, or a rollback).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kubernetes_version: Option<String>,
    /// Per membership (etcd), the nodes the definition made members (none:
    /// recorded before memberships were).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub members: Option<BTreeMap<String, Vec<String>>>,
    /// The control plane that ran `kubeadm init` (`anchor.rs`; none:
    /// no control plane, or recorded before anchors were).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub anchor: Option<String>,
    pub nodes: BTreeMap<String, NodeRecord>,
    /// Nodes removed from the cluster without being reached (`switch
    /// --prune` while they did not answer): their etcd member removed
    /// through a live one, their Kubernetes Node deleted through the API.
    /// Not part of the cluster any more; a switch that reaches one resets
    /// it and drops it from here.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub gone: BTreeMap<String, NodeRecord>,
}

/// Why `rollback` from `latest` to `target` is refused, if it would change
/// a membership: a rollback moves links, it does not add or remove
/// members, so going back across a growth would stop voting members.
pub fn membership_refusal(latest: &Generation, target: &Generation) -> Option<RollbackRefused> {
    let (Some(now), Some(then)) = (&latest.members, &target.members) else { return None };
    let names: std::collections::BTreeSet<&String> = now.keys().chain(then.keys()).collect();
    for name in names {
        let (a, b) = (now.get(name).cloned().unwrap_or_default(), then.get(name).cloned().unwrap_or_default());
        if a != b {
            return Some(RollbackRefused::Membership {
                generation: target.number,
                membership: name.clone(),
                then: b,
                now: a,
            });
        }
    }
    None
}

pub fn dir(state_dir: &Path) -> PathBuf {
    state_dir.join("generations")
}

/// Every recorded generation, read once per run, oldest first. A record
/// that cannot be read is an error naming its file: skipping it would let
/// an older record decide where the nodes are.
#[derive(Debug, Clone, Default)]
pub struct Records {
    gens: Vec<Generation>,
}

impl Records {
    /// The records in `state_dir` (none yet: empty).
    pub fn load(state_dir: &Path) -> Result<Records, RecordsError> {
        let d = dir(state_dir);
        let listing = |e: std::io::Error| RecordsError::Listing { dir: d.clone(), reason: e.to_string() };
        let entries = match std::fs::read_dir(&d) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Records::default()),
            Err(e) => return Err(listing(e)),
        };
        let mut gens = Vec::new();
        for entry in entries {
            let path = entry.map_err(listing)?.path();
            // `.N.json.tmp`: a write cut off before its rename
            let is_record = path.extension().is_some_and(|x| x == "json")
                && !path.file_name().is_some_and(|n| n.to_string_lossy().starts_with('.'));
            if is_record {
                gens.push(read_one(&path)?);
            }
        }
        gens.sort_by_key(|g| g.number);
        Ok(Records { gens })
    }

    /// Oldest first.
    pub fn all(&self) -> &[Generation] {
        &self.gens
    }

    pub fn latest(&self) -> Option<&Generation> {
        self.gens.last()
    }

    /// The latest generation recorded for `cluster` (one project may hold
    /// several clusters, selected with `-A`).
    pub fn latest_of(&self, cluster: &str) -> Option<&Generation> {
        self.gens.iter().rev().find(|g| g.cluster == cluster)
    }

    pub fn next_number(&self) -> u64 {
        self.latest().map_or(1, |g| g.number + 1)
    }
}

/// One record, which must be named for its number (`N.json`).
fn read_one(path: &Path) -> Result<Generation, RecordsError> {
    let unreadable = |reason: String| RecordsError::Unreadable { path: path.to_path_buf(), reason };
    let bytes = std::fs::read(path).map_err(|e| unreadable(e.to_string()))?;
    let g: Generation = serde_json::from_slice(&bytes).map_err(|e| unreadable(e.to_string()))?;
    let named = path.file_stem().and_then(|s| s.to_str()).and_then(|s| s.parse::<u64>().ok());
    if named != Some(g.number) {
        return Err(RecordsError::Misnamed { path: path.to_path_buf(), number: g.number });
    }
    Ok(g)
}

pub fn write(state_dir: &Path, g: &Generation) -> Result<(), RecordWrite> {
    let d = dir(state_dir);
    std::fs::create_dir_all(&d).map_err(|e| RecordWrite { path: d.clone(), reason: e.to_string() })?;
    let tmp = d.join(format!(".{}.json.tmp", g.number));
    let dest = d.join(format!("{}.json", g.number));
    std::fs::write(&tmp, serde_json::to_string_pretty(g).expect("record serialises"))
        .and_then(|_| std::fs::rename(&tmp, &dest))
        .map_err(|e| RecordWrite { path: dest, reason: e.to_string() })
}

pub fn now() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

/// `YYYY-MM-DD HH:MM:SS UTC` without a date library (civil-from-days).
pub fn format_time(secs: u64) -> String {
    let days = (secs / 86400) as i64;
    let rem = secs % 86400;
    let z = days + 719468;
    let era = z.div_euclid(146097);
    let doe = z - era * 146097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + if m <= 2 { 1 } else { 0 };
    format!("{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02} UTC", rem / 3600, rem % 3600 / 60, rem % 60)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(number: u64, cluster: &str) -> String {
        serde_json::json!({"number": number, "cluster": cluster, "time": 0, "phaseOrder": [], "nodes": {}}).to_string()
    }

    #[test]
    fn records_are_read_once_newest_last_and_a_bad_one_is_an_error() {
        let d = tempfile::tempdir().unwrap();
        assert!(Records::load(d.path()).unwrap().latest().is_none());
        let gens = dir(d.path());
        std::fs::create_dir_all(&gens).unwrap();
        std::fs::write(gens.join("2.json"), record(2, "a")).unwrap();
        std::fs::write(gens.join("10.json"), record(10, "b")).unwrap();
        std::fs::write(gens.join(".11.json.tmp"), "cut off").unwrap();
        let r = Records::load(d.path()).unwrap();
        assert_eq!(r.all().iter().map(|g| g.number).collect::<Vec<_>>(), [2, 10]);
        assert_eq!(r.latest_of("a").map(|g| g.number), Some(2));
        assert_eq!(r.next_number(), 11);
        // a damaged latest record must not let an older one decide
        std::fs::write(gens.join("11.json"), "{\"number\": 11, ").unwrap();
        let e = Records::load(d.path()).unwrap_err();
        assert!(matches!(&e, RecordsError::Unreadable { path, .. } if path.ends_with("11.json")), "{e:?}");
        assert!(e.to_string().contains("11.json") && e.to_string().contains("restore the file"), "{e}");
        std::fs::write(gens.join("11.json"), record(12, "a")).unwrap();
        let e = Records::load(d.path()).unwrap_err();
        assert!(matches!(e, RecordsError::Misnamed { number: 12, .. }), "{e:?}");
        assert!(e.to_string().contains("generation 12 under another name"), "{e}");
    }

    #[test]
    fn time_format() {
        assert_eq!(super::format_time(0), "1970-01-01 00:00:00 UTC");
        assert_eq!(super::format_time(1_700_000_000), "2023-11-14 22:13:20 UTC");
    }
}
