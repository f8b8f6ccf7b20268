//! The deployer's history: `.kdeploy/generations/<N>.json`, one file per
//! successful switch or rollback, with the time and, per node, how to reach
//! it and the node generation and hash it was left on — all `rollback` and
//! `generations` need, with no evaluation.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

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
    pub escalation: Option<String>,
    pub key: Option<String>,
    /// `user@host:port` of the bastion, if the node was reached through one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jump_host: Option<String>,
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
            escalation: self.escalation.clone().unwrap_or_else(|| "sudo".to_string()),
            jump_host: self.jump_host.clone(),
            key: self.key.clone(),
            port: self.port,
            user: self.user.clone(),
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
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
}

/// Why `rollback` from `latest` to `target` is refused, if it would change
/// a membership: a rollback moves links, it does not add or remove
/// members, so going back across a growth would stop voting members.
pub fn membership_refusal(latest: &Generation, target: &Generation) -> Option<String> {
    let (Some(now), Some(then)) = (&latest.members, &target.members) else { return None };
    let names: std::collections::BTreeSet<&String> = now.keys().chain(then.keys()).collect();
    for name in names {
        let (a, b) = (now.get(name).cloned().unwrap_or_default(), then.get(name).cloned().unwrap_or_default());
        if a != b {
            return Some(format!(
                "generation {} has {name} members [{}], the nodes now have [{}]: rollback does not change a \
                 membership; edit the definition back and run `kdeploy switch` instead",
                target.number,
                b.join(", "),
                a.join(", ")
            ));
        }
    }
    None
}

pub fn dir(state_dir: &Path) -> PathBuf {
    state_dir.join("generations")
}

/// All recorded generations, oldest first (unreadable files are skipped).
pub fn list(state_dir: &Path) -> Vec<Generation> {
    let mut out: Vec<Generation> = std::fs::read_dir(dir(state_dir))
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "json"))
        .filter_map(|e| serde_json::from_slice(&std::fs::read(e.path()).ok()?).ok())
        .collect();
    out.sort_by_key(|g| g.number);
    out
}

pub fn latest(state_dir: &Path) -> Option<Generation> {
    list(state_dir).pop()
}

/// The latest generation recorded for `cluster` (one project may hold
/// several clusters, selected with `-A`).
pub fn latest_of(state_dir: &Path, cluster: &str) -> Option<Generation> {
    list(state_dir).into_iter().rev().find(|g| g.cluster == cluster)
}

pub fn next_number(state_dir: &Path) -> u64 {
    latest(state_dir).map_or(1, |g| g.number + 1)
}

pub fn write(state_dir: &Path, g: &Generation) -> Result<(), String> {
    let d = dir(state_dir);
    std::fs::create_dir_all(&d).map_err(|e| format!("{}: {e}", d.display()))?;
    let tmp = d.join(format!(".{}.json.tmp", g.number));
    let dest = d.join(format!("{}.json", g.number));
    std::fs::write(&tmp, serde_json::to_string_pretty(g).expect("record serialises"))
        .and_then(|_| std::fs::rename(&tmp, &dest))
        .map_err(|e| format!("{}: {e}", dest.display()))
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
    #[test]
    fn time_format() {
        assert_eq!(super::format_time(0), "1970-01-01 00:00:00 UTC");
        assert_eq!(super::format_time(1_700_000_000), "2023-11-14 22:13:20 UTC");
    }
}
