//! The task listing of `kdeploy plan` / `kdeploy eval --list-tasks`, in the
//! spirit of `ansible-playbook --list-tasks`: for each phase in order, the
//! steps the engine would take (pre hooks, install files and directories,
//! units, post hooks, checks) and on which nodes. Steps are grouped across
//! nodes by what they do, so 1000 workers read as one line.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::closure::{Closures, Phase, When};

/// "node4", "node5", "node7", "cp1" → "cp1, node[4-5,7]".
pub fn compress_names(names: &[&str]) -> String {
    let mut groups: BTreeMap<&str, Vec<u64>> = BTreeMap::new();
    let mut plain: Vec<&str> = Vec::new();
    for n in names {
        let digits = n.len() - n.trim_end_matches(|c: char| c.is_ascii_digit()).len();
        let (prefix, num) = n.split_at(n.len() - digits);
        // Leading zeros would not survive the round trip through a number.
        match num.parse::<u64>() {
            Ok(v) if !num.starts_with('0') => groups.entry(prefix).or_default().push(v),
            _ => plain.push(n),
        }
    }
    let mut parts: Vec<String> = plain.iter().map(|s| s.to_string()).collect();
    for (prefix, mut nums) in groups {
        nums.sort_unstable();
        if nums.len() == 1 {
            parts.push(format!("{prefix}{}", nums[0]));
            continue;
        }
        let mut ranges: Vec<String> = Vec::new();
        let mut i = 0;
        while i < nums.len() {
            let mut j = i;
            while j + 1 < nums.len() && nums[j + 1] == nums[j] + 1 {
                j += 1;
            }
            ranges.push(if i == j { nums[i].to_string() } else { format!("{}-{}", nums[i], nums[j]) });
            i = j + 1;
        }
        parts.push(format!("{prefix}[{}]", ranges.join(",")));
    }
    parts.sort();
    parts.join(", ")
}

fn steps(p: &Phase) -> Vec<String> {
    let mut out = Vec::new();
    let hook = |h: &crate::closure::Hook| {
        let guard = h.unless.as_deref().map_or(String::new(), |u| format!(" (unless: {})", first_line(u)));
        let on = h.delegate.as_deref().map_or(String::new(), |d| format!(" on {d}"));
        let upgrade = if h.upgrade { " [upgrades only]" } else { "" };
        let rolling = if h.disrupts { " [in rollout batches]" } else { "" };
        format!("{}-hook {}{on}{upgrade}{rolling}{guard}", h.when.as_str(), h.name)
    };
    out.extend(p.hooks.iter().filter(|h| h.when == When::Pre).map(hook));
    out.extend(p.directories.iter().map(|d| format!("directory {} {} {}:{}", d.path, d.mode, d.owner, d.group)));
    out.extend(
        p.files.iter().map(|f| format!("file {} {} {}:{} ({})", f.path, f.mode, f.owner, f.group, f.source.kind())),
    );
    out.extend(p.units.iter().map(|u| {
        let start = if u.enable { "enable + start" } else { "install" };
        let trig = if u.restart_triggers.is_empty() {
            String::new()
        } else {
            format!(", triggers: {}", u.restart_triggers.join(" "))
        };
        format!("unit {} ({start}; on change: {}{trig})", u.name, u.on_change.as_str())
    }));
    out.extend(p.hooks.iter().filter(|h| h.when == When::Post).map(hook));
    out.extend(p.checks.iter().map(|c| format!("check {} ({} × {}s)", c.name, c.retries, c.delay)));
    out.extend(p.hooks.iter().filter(|h| h.when == When::Reset).map(hook));
    out
}

fn first_line(s: &str) -> String {
    let l = s.lines().next().unwrap_or("");
    if s.lines().nth(1).is_some() {
        format!("{l} …")
    } else {
        l.to_string()
    }
}

pub fn listing(c: &Closures, node: Option<&str>) -> String {
    let cl = &c.cluster;
    let nodes: Vec<&String> = cl.nodes.keys().filter(|n| node.is_none_or(|w| w == n.as_str())).collect();
    let all = nodes.len();
    let mut o = String::new();
    let _ = writeln!(o, "cluster: {} ({} nodes)", cl.name, all);
    if !cl.upgrade_phase_order.is_empty() && cl.upgrade_phase_order != cl.phase_order {
        let _ = writeln!(
            o,
            "when kubernetes.version changes, phases run in the upgrade order: {}\n\
             (\"[upgrades only]\" steps run then; the anchor's first and alone, then one batch at a time)",
            cl.upgrade_phase_order.join(" → ")
        );
    }
    for (i, phase) in cl.phase_order.iter().enumerate() {
        // step text → nodes, in first-seen order; plus which nodes activate it.
        let mut order: Vec<String> = Vec::new();
        let mut who: BTreeMap<String, Vec<&str>> = BTreeMap::new();
        let mut generate_only: Vec<&str> = Vec::new();
        let mut hashes: BTreeMap<String, Vec<&str>> = BTreeMap::new();
        for n in &nodes {
            let p = &cl.nodes[*n].phases[i];
            let s = steps(p);
            if s.is_empty() {
                continue;
            }
            if !p.activate {
                generate_only.push(n);
            }
            hashes.entry(c.nodes[*n].phases[i].hash.short()).or_default().push(n);
            for step in s {
                if !who.contains_key(&step) {
                    order.push(step.clone());
                }
                who.entry(step).or_default().push(n);
            }
        }
        let on: usize = hashes.values().map(Vec::len).sum();
        let _ = writeln!(o, "\nphase #{} {phase}: {on} of {all} nodes, {} distinct closures", i + 1, hashes.len());
        if !generate_only.is_empty() {
            let _ = writeln!(o, "  generated, not activated on: {}", compress_names(&generate_only));
        }
        for step in order {
            let ns = &who[&step];
            let whom = if ns.len() == all { "all".to_string() } else { compress_names(ns) };
            let _ = writeln!(o, "    {step}  [{whom}]");
        }
    }
    o
}
