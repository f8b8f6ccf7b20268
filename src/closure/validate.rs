//! Engine-level invariants of a parsed cluster, checked before anything is
//! hashed or pushed: what the engine relies on to install files atomically
//! and restart the right units. All violations are collected, each naming
//! node, phase and path, so one run shows every problem.

use std::collections::{BTreeMap, HashMap, HashSet};

use super::schema::{Cluster, Make, Node, Phase, Secret, Source};
use super::Error;

/// Unit types systemd installs from `/etc/systemd/system/<name>`.
const UNIT_SUFFIXES: &[&str] =
    &[".service", ".socket", ".timer", ".mount", ".automount", ".path", ".target", ".slice", ".swap"];

/// How many problems are reported before the rest are only counted.
const MAX_REPORTED: usize = 20;

pub fn validate(c: &Cluster) -> Result<(), Error> {
    let mut errs = Vec::new();
    if c.phase_order.is_empty() {
        errs.push("cluster: phaseOrder is empty".to_string());
    }
    let mut seen = HashSet::new();
    for p in &c.phase_order {
        if !seen.insert(p) {
            errs.push(format!("cluster: phase {p:?} appears twice in phaseOrder"));
        }
    }
    if c.nodes.is_empty() {
        errs.push("cluster: no nodes".to_string());
    }
    for (name, node) in &c.nodes {
        validate_node(c, name, node, &mut errs);
    }
    if errs.is_empty() {
        return Ok(());
    }
    let n = errs.len();
    let mut msg = format!("invalid closure ({n} problem{}):", if n == 1 { "" } else { "s" });
    for e in errs.iter().take(MAX_REPORTED) {
        msg.push_str("\n  - ");
        msg.push_str(e);
    }
    if n > MAX_REPORTED {
        msg.push_str(&format!("\n  … and {} more", n - MAX_REPORTED));
    }
    Err(Error(msg))
}

/// Absolute, normalised: no empty, `.` or `..` components, no trailing `/`.
pub fn is_clean_absolute(p: &str) -> bool {
    p.len() > 1
        && p.starts_with('/')
        && !p.ends_with('/')
        && p[1..].split('/').all(|c| !c.is_empty() && c != "." && c != "..")
        && !p.contains('\0')
}

/// "0644", "755", "01777": three or four octal digits.
pub fn is_octal_mode(m: &str) -> bool {
    (3..=5).contains(&m.len())
        && m.bytes().all(|b| (b'0'..=b'7').contains(&b))
        && u32::from_str_radix(m, 8).is_ok_and(|v| v <= 0o7777)
}

fn is_account(s: &str) -> bool {
    !s.is_empty() && !s.contains(|c: char| c.is_whitespace() || c == ':' || c == '/')
}

fn is_unit_name(n: &str) -> bool {
    UNIT_SUFFIXES.iter().any(|s| n.len() > s.len() && n.ends_with(s))
        && n.chars().all(|c| c.is_ascii_alphanumeric() || ":-_.\\@".contains(c))
}

fn validate_node(c: &Cluster, name: &str, node: &Node, errs: &mut Vec<String>) {
    if node.address.is_empty() {
        errs.push(format!("node {name}: empty address"));
    }
    if node.ssh.user.is_empty() || node.ssh.port == 0 {
        errs.push(format!("node {name}: ssh needs a user and a port from 1 to 65535"));
    }
    let names: Vec<&str> = node.phases.iter().map(|p| p.name.as_str()).collect();
    if names != c.phase_order.iter().map(String::as_str).collect::<Vec<_>>() {
        errs.push(format!(
            "node {name}: phases [{}] do not match phaseOrder [{}]",
            names.join(", "),
            c.phase_order.join(", ")
        ));
    }
    // path → phase index, for uniqueness and for restart triggers.
    let mut files: HashMap<&str, usize> = HashMap::new();
    let mut dirs: BTreeMap<&str, (usize, (&str, &str, &str))> = BTreeMap::new();
    let mut units: HashMap<&str, &str> = HashMap::new();
    for (i, phase) in node.phases.iter().enumerate() {
        let at = |what: &str| format!("node {name}, phase {}, {what}", phase.name);
        for f in &phase.files {
            let at = at(&format!("file {}", f.path));
            check_entry(&at, &f.path, &f.mode, &f.owner, &f.group, errs);
            check_source(&at, &f.source, errs);
            if let Some(j) = files.insert(&f.path, i) {
                errs.push(format!("{at}: already a file of phase {}", node.phases[j].name));
            }
        }
        for d in &phase.directories {
            let at = at(&format!("directory {}", d.path));
            check_entry(&at, &d.path, &d.mode, &d.owner, &d.group, errs);
            let attrs = (d.mode.as_str(), d.owner.as_str(), d.group.as_str());
            match dirs.get(d.path.as_str()) {
                Some((j, prev)) if *prev != attrs => errs.push(format!(
                    "{at}: declared again with a different mode/owner/group than in phase {}",
                    node.phases[*j].name
                )),
                Some(_) => {}
                None => {
                    dirs.insert(&d.path, (i, attrs));
                }
            }
        }
        for u in &phase.units {
            let at = at(&format!("unit {}", u.name));
            if !is_unit_name(&u.name) {
                errs.push(format!(
                    "{at}: not a unit file name (letters, digits, :-_.\\@, ending in {})",
                    UNIT_SUFFIXES.join("/")
                ));
            }
            if let Some(prev) = units.insert(&u.name, &phase.name) {
                errs.push(format!("{at}: already a unit of phase {prev}"));
            }
            for t in &u.restart_triggers {
                match files.get(t.as_str()) {
                    Some(_) => {}
                    None => errs.push(format!(
                        "{at}: restart trigger {t} is not a file of this node in this or an earlier phase"
                    )),
                }
            }
        }
        check_names(&phase.name, name, phase, errs);
    }
    for (f, i) in &files {
        if dirs.contains_key(f) {
            errs.push(format!("node {name}, phase {}: {f} is both a file and a directory", node.phases[*i].name));
        }
        if let Some(unit) = f.strip_prefix("/etc/systemd/system/").filter(|u| units.contains_key(u)) {
            errs.push(format!("node {name}, phase {}: file {f} collides with unit {unit}", node.phases[*i].name));
        }
    }
}

fn check_names(phase_name: &str, node: &str, phase: &Phase, errs: &mut Vec<String>) {
    let mut hooks = HashSet::new();
    for h in &phase.hooks {
        if h.name.is_empty() || !hooks.insert(&h.name) {
            errs.push(format!(
                "node {node}, phase {phase_name}: hook name {:?} empty or not unique in the phase",
                h.name
            ));
        }
    }
    let mut checks = HashSet::new();
    for c in &phase.checks {
        if c.name.is_empty() || !checks.insert(&c.name) {
            errs.push(format!(
                "node {node}, phase {phase_name}: check name {:?} empty or not unique in the phase",
                c.name
            ));
        }
    }
}

fn check_entry(at: &str, path: &str, mode: &str, owner: &str, group: &str, errs: &mut Vec<String>) {
    if !is_clean_absolute(path) {
        errs.push(format!("{at}: path must be absolute and normalised (no //, ., .. or trailing /)"));
    }
    if !is_octal_mode(mode) {
        errs.push(format!("{at}: mode {mode:?} is not an octal mode like \"0644\""));
    }
    if !is_account(owner) || !is_account(group) {
        errs.push(format!("{at}: owner {owner:?} / group {group:?} must be non-empty names"));
    }
}

fn check_source(at: &str, s: &Source, errs: &mut Vec<String>) {
    match s {
        Source::Text(_) => {}
        Source::File(p) => {
            if p.is_empty() || p.starts_with('/') || p.split('/').any(|c| c == "..") {
                errs.push(format!("{at}: project file {p:?} must be relative to the project root, without '..'"));
            }
        }
        Source::Local(p) => {
            if !p.starts_with('/') {
                errs.push(format!("{at}: deployer file {p:?} must be an absolute path"));
            }
        }
        Source::Secret(sec) => check_secret(at, sec, errs),
        Source::Artifact(a) => {
            if a.name.is_empty() || a.name.contains('/') || a.name.starts_with('.') {
                errs.push(format!("{at}: artifact name {:?} must be a plain file name", a.name));
            }
            if a.sha256.len() != 64 || !a.sha256.bytes().all(|b| b.is_ascii_hexdigit()) {
                errs.push(format!("{at}: artifact {} sha256 {:?} is not 64 hex digits", a.name, a.sha256));
            }
            if a.url.is_empty() {
                errs.push(format!("{at}: artifact {} has no url", a.name));
            }
            if a.member.as_deref().is_some_and(|m| m.is_empty() || m.starts_with('/')) {
                errs.push(format!("{at}: artifact {} member must be a relative path", a.name));
            }
        }
    }
}

/// A name in the deployer's secret store: relative, plain components.
pub fn is_secret_name(n: &str) -> bool {
    !n.is_empty()
        && n.split('/').all(|c| {
            !c.is_empty() && !c.starts_with('.') && c.bytes().all(|b| b.is_ascii_alphanumeric() || b"._@-".contains(&b))
        })
}

fn check_secret(at: &str, s: &Secret, errs: &mut Vec<String>) {
    // A CA may be the user's own (absolute deployer paths); everything the
    // engine makes lives in the secret store under a relative name.
    let stored_or_own = |n: &str| is_secret_name(n) || is_clean_absolute(n);
    let names: Vec<&str> = match &s.make {
        Make::Token | Make::Hex { .. } => vec![s.name.as_str()],
        Make::Ca(ca) => vec![ca.cert.as_str()],
        Make::Cert(c) => {
            if !stored_or_own(&c.ca.cert) || !stored_or_own(&c.ca.key) {
                errs.push(format!("{at}: secret {:?}: bad CA file names {:?} / {:?}", s.name, c.ca.cert, c.ca.key));
            }
            if !is_secret_name(&c.key) {
                errs.push(format!("{at}: secret {:?}: bad key name {:?}", s.name, c.key));
            }
            for ip in &c.ip_addresses {
                if ip.parse::<std::net::IpAddr>().is_err() {
                    errs.push(format!("{at}: secret {:?}: {ip:?} is not an IP address", s.name));
                }
            }
            vec![c.cert.as_str(), c.key.as_str()]
        }
    };
    if !stored_or_own(&s.name) {
        errs.push(format!(
            "{at}: secret name {:?} must be a relative path of plain names (or, for a CA, absolute)",
            s.name
        ));
    } else if !names.contains(&s.name.as_str()) {
        errs.push(format!("{at}: secret {:?} is not a file its make produces ({})", s.name, names.join(", ")));
    }
    if let Make::Hex { bytes } = s.make {
        if !(16..=256).contains(&bytes) {
            errs.push(format!("{at}: secret {:?}: hex bytes {bytes} not in 16..256", s.name));
        }
    }
}
