//! Engine-level invariants of a parsed cluster, checked before anything is
//! hashed or pushed: what the engine relies on to install files atomically
//! and restart the right units, and what it refuses to do to a node whatever
//! the cluster file says. A cluster file is code the deployer runs, but its
//! value may come from anywhere (it need not use the stdlib), so this is the
//! one place that closes the closure:
//!
//! * managed paths (files, directories, unit files, restart triggers) are
//!   absolute, normalised, free of control characters, within the length
//!   limits, and never in kdeploy's own state directory (`/var/lib/kdeploy`),
//!   `/proc`, `/sys` or `/dev`; system directories (`/etc`, `/usr`, …) are
//!   never files and only appear as directories with the mode and owner they
//!   already have;
//! * modes are 3 or 4 octal digits (`755`, `0644`, `1777`), what `chmod` and
//!   the node program take; owners and groups are user names or numeric ids;
//! * unit names are what systemd accepts for a unit file (characters, a known
//!   suffix, 255 bytes, template `@` rules); phase names what the node
//!   program accepts; hook and check names are printable and unique;
//! * scripts and unit texts hold no NUL byte (they travel as `sh -c` words);
//! * every name a secret holds passes the secret store's one rule
//!   (`store::secrets::name_problem`: relative, plain parts, no `..`; only a
//!   user's own CA absolute), and inline text holds no private key (keys
//!   travel as secrets: `store::key_material`).
//!
//! All violations are collected, each naming node, phase and path, so one run
//! shows every problem.

use std::collections::{BTreeMap, HashMap, HashSet};

use rayon::prelude::*;

use super::Error;
use crate::schema::{Cluster, Directory, Make, Node, OnChange, Phase, Secret, Source, Unit};
use crate::store::{key_material, secrets};

/// Unit types systemd installs from `/etc/systemd/system/<name>`.
const UNIT_SUFFIXES: &[&str] =
    &[".service", ".socket", ".timer", ".mount", ".automount", ".path", ".target", ".slice", ".swap"];

/// Never a managed path, nor anything below it: kdeploy's own state on the
/// node (blob store, generations, the phase links every managed path points
/// through) and the kernel's virtual file systems.
pub const FORBIDDEN_ROOTS: &[&str] = &["/var/lib/kdeploy", "/proc", "/sys", "/dev"];

/// System directories with the mode they have on a Debian/Ubuntu/RHEL node
/// (owner root:root). A closure may never put a file there, and may declare
/// them as directories only as they are (harmless "make sure it exists", as
/// the preinstall phase does for `paths.binDir`): a data directory of 0700 on
/// `/etc` or `/usr` would break the node.
pub const SYSTEM_DIRS: &[(&str, u32)] = &[
    ("/bin", 0o755),
    ("/boot", 0o755),
    ("/etc", 0o755),
    ("/etc/default", 0o755),
    ("/etc/modprobe.d", 0o755),
    ("/etc/modules-load.d", 0o755),
    ("/etc/ssl", 0o755),
    ("/etc/sysctl.d", 0o755),
    ("/etc/systemd", 0o755),
    ("/etc/systemd/system", 0o755),
    ("/home", 0o755),
    ("/lib", 0o755),
    ("/lib32", 0o755),
    ("/lib64", 0o755),
    ("/media", 0o755),
    ("/mnt", 0o755),
    ("/opt", 0o755),
    ("/root", 0o700),
    ("/run", 0o755),
    ("/sbin", 0o755),
    ("/srv", 0o755),
    ("/tmp", 0o1777),
    ("/usr", 0o755),
    ("/usr/bin", 0o755),
    ("/usr/include", 0o755),
    ("/usr/lib", 0o755),
    ("/usr/lib64", 0o755),
    ("/usr/libexec", 0o755),
    ("/usr/local", 0o755),
    ("/usr/local/bin", 0o755),
    ("/usr/local/lib", 0o755),
    ("/usr/local/sbin", 0o755),
    ("/usr/local/share", 0o755),
    ("/usr/sbin", 0o755),
    ("/usr/share", 0o755),
    ("/usr/src", 0o755),
    ("/var", 0o755),
    ("/var/cache", 0o755),
    ("/var/lib", 0o755),
    ("/var/log", 0o755),
    ("/var/opt", 0o755),
    ("/var/spool", 0o755),
    ("/var/tmp", 0o1777),
];

/// Linux's limits: a path of at most PATH_MAX - 1 bytes, names of NAME_MAX.
const PATH_MAX: usize = 4095;
const NAME_MAX: usize = 255;
/// systemd's UNIT_NAME_MAX - 1.
const UNIT_NAME_MAX: usize = 255;

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
        if !is_phase_name(p) {
            errs.push(format!(
                "cluster: phase name {p:?} is not a plain name (letters, digits, . _ @ -; not starting with . or -)"
            ));
        }
    }
    if c.nodes.is_empty() {
        errs.push("cluster: no nodes".to_string());
    }
    // Nodes in parallel, their problems in node order; each worker keeps
    // the phases it found without problems, by allocation.
    let per_node: Vec<Vec<String>> = c
        .nodes
        .par_iter()
        .map_init(HashSet::new, |clean, (name, node)| {
            let mut errs = Vec::new();
            validate_node(c, name, node, clean, &mut errs);
            errs
        })
        .collect();
    errs.extend(per_node.into_iter().flatten());
    if errs.is_empty() {
        return Ok(());
    }
    Err(Error::Invalid(errs))
}

/// A control character (C0 including NUL and tab, DEL, C1): it would end a
/// manifest line, split a `read` on the node, or hide in a log line.
fn has_control(s: &str) -> bool {
    s.chars().any(char::is_control)
}

/// A name or path as it can be shown in one line of an error.
fn shown(s: &str) -> String {
    if has_control(s) {
        format!("{s:?}")
    } else {
        s.to_string()
    }
}

/// Why `p` is not an absolute, normalised, printable path within Linux's
/// limits (`None`: it is one).
fn path_problem(p: &str) -> Option<&'static str> {
    if !p.starts_with('/') || p == "/" {
        Some("must be absolute (and not / itself)")
    } else if has_control(p) {
        Some("contains a control character (tab, newline, …)")
    } else if p.ends_with('/') || p[1..].split('/').any(|c| c.is_empty() || c == "." || c == "..") {
        Some("must be normalised (no //, . or .. components, no trailing /)")
    } else if p.len() > PATH_MAX || p.split('/').any(|c| c.len() > NAME_MAX) {
        Some("is too long (at most 4095 bytes, 255 per name)")
    } else {
        None
    }
}

/// Absolute, normalised: no empty, `.` or `..` components, no trailing `/`,
/// no control characters.
pub fn is_clean_absolute(p: &str) -> bool {
    path_problem(p).is_none()
}

/// `p` is `root` or below it.
fn is_below(p: &str, root: &str) -> bool {
    p.strip_prefix(root).is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
}

/// Why `p` cannot be a managed path of a node (`None`: it can).
pub fn managed_path_problem(p: &str) -> Option<String> {
    if let Some(why) = path_problem(p) {
        return Some(format!("path {why}"));
    }
    FORBIDDEN_ROOTS.iter().find(|r| is_below(p, r)).map(|r| {
        let what = if *r == "/var/lib/kdeploy" { "kdeploy's own state directory" } else { "a kernel file system" };
        format!("path lies in {r} ({what}), which kdeploy never manages")
    })
}

/// "0644", "755", "1777": three or four octal digits, as `chmod` and the
/// node program take them. ("00644" is refused: to GNU chmod a fifth digit
/// means something else on directories.)
pub fn is_octal_mode(m: &str) -> bool {
    (3..=4).contains(&m.len()) && m.bytes().all(|b| (b'0'..=b'7').contains(&b))
}

/// A user or group: a name as `useradd` takes it (a letter or `_`, then
/// letters, digits, `_ . -`; at most 32) or a numeric id. Never starting
/// with `-` (it reaches `chown` as an argument) nor holding `:` or `/`.
fn is_account(s: &str) -> bool {
    let b = s.as_bytes();
    if !b.is_empty() && b.len() <= 10 && b.iter().all(u8::is_ascii_digit) {
        return true;
    }
    !b.is_empty()
        && b.len() <= 32
        && (b[0].is_ascii_alphabetic() || b[0] == b'_')
        && b.iter().all(|c| c.is_ascii_alphanumeric() || b"_.-".contains(c))
}

/// A phase name as the node program takes it (`is_name`): it becomes a
/// directory name under the node's state directory.
fn is_phase_name(n: &str) -> bool {
    !n.is_empty()
        && n.len() <= NAME_MAX
        && !n.starts_with(['.', '-'])
        && n.bytes().all(|b| b.is_ascii_alphanumeric() || b"._@-".contains(&b))
}

#[derive(Debug, PartialEq, Eq)]
enum UnitKind {
    Plain,
    /// `name@.service`: only instances of it can run.
    Template,
    /// `name@instance.service`.
    Instance,
}

/// Why systemd refuses a unit name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
enum UnitName {
    #[error("longer than {UNIT_NAME_MAX} bytes")]
    TooLong,
    #[error("it must end in one of {}", UNIT_SUFFIXES.join(" "))]
    Suffix,
    #[error("character {0:?} is not allowed (letters, digits and : - _ . \\ @)")]
    Char(char),
    #[error("'@' may not come first")]
    AtFirst,
}

/// A unit name as systemd reads it (`unit_name_is_valid`): at most 255
/// bytes, `PREFIX.SUFFIX` with one of the suffixes kdeploy installs from
/// files, the prefix of letters, digits and `: - _ . \ @`; an `@` may not
/// come first, `@` right before the suffix makes a template.
fn unit_kind(n: &str) -> Result<UnitKind, UnitName> {
    if n.len() > UNIT_NAME_MAX {
        return Err(UnitName::TooLong);
    }
    let suffix = n.rfind('.').filter(|&i| i > 0).map(|i| &n[i..]);
    let Some(suffix) = suffix.filter(|s| UNIT_SUFFIXES.contains(s)) else {
        return Err(UnitName::Suffix);
    };
    let prefix = &n[..n.len() - suffix.len()];
    if let Some(c) = prefix.chars().find(|c| !(c.is_ascii_alphanumeric() || ":-_.\\@".contains(*c))) {
        return Err(UnitName::Char(c));
    }
    match prefix.find('@') {
        None => Ok(UnitKind::Plain),
        Some(0) => Err(UnitName::AtFirst),
        Some(i) if i + 1 == prefix.len() => Ok(UnitKind::Template),
        Some(_) => Ok(UnitKind::Instance),
    }
}

fn validate_node(c: &Cluster, name: &str, node: &Node, clean: &mut HashSet<usize>, errs: &mut Vec<String>) {
    if name.is_empty() || name.contains(|c: char| c.is_control() || c.is_whitespace()) {
        errs.push(format!("node {}: a node name is one word of printable characters", shown(name)));
    }
    if node.address.is_empty() {
        errs.push(format!("node {name}: empty address"));
    }
    if node.ssh.user.as_deref() == Some("") || node.ssh.port == Some(0) {
        errs.push(format!("node {name}: ssh.user cannot be empty, ssh.port is 1 to 65535"));
    }
    if !node.phases.iter().map(|p| p.name.as_str()).eq(c.phase_order.iter().map(String::as_str)) {
        let names: Vec<&str> = node.phases.iter().map(|p| p.name.as_str()).collect();
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
        // What a phase is on its own is checked once per shared phase
        // (the nodes of a group hold one); a phase with problems is
        // checked again for each node, whose errors name it.
        if !clean.contains(&phase.addr()) {
            let before = errs.len();
            check_phase(c, name, phase, errs);
            if errs.len() == before {
                clean.insert(phase.addr());
            }
        }
        let at = |what: &str, path: &str| format!("node {name}, phase {}, {what} {}", phase.name, shown(path));
        for f in &phase.files {
            if let Some(j) = files.insert(&f.path, i) {
                errs.push(format!("{}: already a file of phase {}", at("file", &f.path), node.phases[j].name));
            }
        }
        for d in &phase.directories {
            let attrs = (d.mode.as_str(), d.owner.as_str(), d.group.as_str());
            match dirs.get(d.path.as_str()) {
                Some((j, prev)) if *prev != attrs => errs.push(format!(
                    "{}: declared again with a different mode/owner/group than in phase {}",
                    at("directory", &d.path),
                    node.phases[*j].name
                )),
                Some(_) => {}
                None => {
                    dirs.insert(&d.path, (i, attrs));
                }
            }
        }
        for u in &phase.units {
            if let Some(prev) = units.insert(&u.name, &phase.name) {
                errs.push(format!("{}: already a unit of phase {prev}", at("unit", &u.name)));
            }
            for t in &u.restart_triggers {
                if !files.contains_key(t.as_str()) {
                    errs.push(format!(
                        "{}: restart trigger {} is not a file of this node in this or an earlier phase",
                        at("unit", &u.name),
                        shown(t)
                    ));
                }
            }
        }
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

/// What one phase of node `name` must be on its own, whatever the node's
/// other phases hold: its entries, sources, units and steps. Checked first
/// without naming the places (nothing formatted for a clean phase).
fn check_phase(c: &Cluster, name: &str, phase: &Phase, errs: &mut Vec<String>) {
    let mut found = Vec::new();
    check_phase_at(c, phase, &|_| String::new(), &mut found);
    if !found.is_empty() {
        let at = |what: Option<(&str, &str)>| match what {
            Some((kind, path)) => format!("node {name}, phase {}, {kind} {}", phase.name, shown(path)),
            None => format!("node {name}, phase {}", phase.name),
        };
        check_phase_at(c, phase, &at, errs);
    }
}

/// Names a place in a phase for an error: `Some((kind, path))` an entry
/// of the phase, `None` the phase.
type At<'a> = dyn Fn(Option<(&str, &str)>) -> String + 'a;

/// [`check_phase`], with `at` naming the places.
fn check_phase_at(c: &Cluster, phase: &Phase, at: &At, errs: &mut Vec<String>) {
    for f in &phase.files {
        let at = at(Some(("file", &f.path)));
        check_entry(&at, &f.path, &f.mode, &f.owner, &f.group, errs);
        if SYSTEM_DIRS.iter().any(|(d, _)| *d == f.path) {
            errs.push(format!("{at}: a system directory, never a file"));
        }
        check_source(&at, &f.source, errs);
    }
    for d in &phase.directories {
        let at = at(Some(("directory", &d.path)));
        check_entry(&at, &d.path, &d.mode, &d.owner, &d.group, errs);
        check_system_dir(&at, d, errs);
    }
    for u in &phase.units {
        check_unit(&at(Some(("unit", &u.name))), u, errs);
    }
    check_steps(&at(None), phase, errs);
    for h in phase.hooks.iter().filter(|h| h.delegate.as_ref().is_some_and(|d| !c.nodes.contains_key(d))) {
        errs.push(format!(
            "{}: hook {} runs on {}, which is not a node of the cluster",
            at(None),
            shown(&h.name),
            shown(h.delegate.as_deref().unwrap_or_default())
        ));
    }
}

fn check_unit(at: &str, u: &Unit, errs: &mut Vec<String>) {
    match unit_kind(&u.name) {
        Err(why) => errs.push(format!("{at}: not a unit file name systemd accepts: {why}")),
        Ok(UnitKind::Template) if u.enable || u.on_change != OnChange::None => errs.push(format!(
            "{at}: a template unit cannot be started, enabled or restarted by its own name \
             (give it enable = false and onChange = \"none\"; its instances NAME@INSTANCE run by theirs)"
        )),
        Ok(_) => {}
    }
    if u.text.contains('\0') {
        errs.push(format!("{at}: the unit text holds a NUL byte"));
    }
}

/// Hooks and checks: printable names, unique in the phase; scripts without
/// NUL bytes (they reach the node as one `sh -c` word).
fn check_steps(at: &str, phase: &Phase, errs: &mut Vec<String>) {
    let steps = phase.hooks.iter().map(|h| ("hook", &h.name, vec![Some(h.run.as_str()), h.unless.as_deref()]));
    let steps = steps.chain(phase.checks.iter().map(|c| ("check", &c.name, vec![Some(c.run.as_str())])));
    let mut seen = HashSet::new();
    for (kind, name, scripts) in steps {
        if name.is_empty() || name.len() > NAME_MAX || has_control(name) || !seen.insert((kind, name)) {
            errs.push(format!(
                "{at}: {kind} name {name:?} empty, longer than {NAME_MAX} bytes, not printable, or not unique in the phase"
            ));
        }
        if scripts.into_iter().flatten().any(|s| s.contains('\0')) {
            errs.push(format!("{at}: {kind} {}: its script holds a NUL byte", shown(name)));
        }
    }
}

fn check_entry(at: &str, path: &str, mode: &str, owner: &str, group: &str, errs: &mut Vec<String>) {
    if let Some(why) = managed_path_problem(path) {
        errs.push(format!("{at}: {why}"));
    }
    if !is_octal_mode(mode) {
        errs.push(format!(
            "{at}: mode {mode:?} is not 3 or 4 octal digits like \"0644\" or \"755\" (what chmod and the node program take)"
        ));
    }
    if !is_account(owner) || !is_account(group) {
        errs.push(format!(
            "{at}: owner {owner:?} / group {group:?} must be user/group names (a letter or _, then letters, digits, _ . -) or numeric ids"
        ));
    }
}

/// A system directory may be declared, but only as it already is.
fn check_system_dir(at: &str, d: &Directory, errs: &mut Vec<String>) {
    let Some((_, want)) = SYSTEM_DIRS.iter().find(|(p, _)| *p == d.path) else { return };
    let mode = u32::from_str_radix(&d.mode, 8).ok();
    if mode != Some(*want) || d.owner != "root" || d.group != "root" {
        errs.push(format!(
            "{at}: a system directory; kdeploy declares it only as it is (mode {want:04o}, root:root), not {} {}:{}",
            d.mode, d.owner, d.group
        ));
    }
}

fn check_source(at: &str, s: &Source, errs: &mut Vec<String>) {
    match s {
        Source::Text(t) => {
            if let Some(why) = key_material::in_content(t.as_bytes()) {
                errs.push(format!("{at}: inline text {why}: {}", key_material::USE_SECRET_FILE));
            }
        }
        Source::File(p) => {
            if !is_project_path(p) {
                errs.push(format!("{at}: project file {p:?} must be relative to the project root, without '..'"));
            }
        }
        Source::Local(p) => {
            if let Some(why) = path_problem(p) {
                errs.push(format!("{at}: deployer file {}: {why}", shown(p)));
            }
        }
        Source::SecretFile(p) => {
            let why = if p.starts_with('/') {
                path_problem(p)
            } else {
                (!is_project_path(p))
                    .then_some("must be a path relative to the project root, without '..', or an absolute one")
            };
            if let Some(why) = why {
                errs.push(format!("{at}: secret file {}: {why}", shown(p)));
            }
        }
        Source::SecretCommand(argv) => {
            if argv.is_empty() || argv[0].is_empty() {
                errs.push(format!("{at}: secret command: names no program"));
            } else if argv.iter().any(|w| w.contains('\0')) {
                errs.push(format!("{at}: secret command `{}`: a word holds a NUL", crate::schema::command_line(argv)));
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

/// A path relative to the project root: not empty, not absolute, no `..`,
/// printable.
fn is_project_path(p: &str) -> bool {
    !(p.is_empty() || p.starts_with('/') || p.split('/').any(|c| c == "..") || has_control(p))
}

/// Every name field of a secret by the one rule of the secret store
/// ([`secrets::field_problem`]); the secret's name is one its make produces.
fn check_secret(at: &str, s: &Secret, errs: &mut Vec<String>) {
    for why in secrets::names_problems(s) {
        errs.push(format!("{at}: secret {:?}: {why}", s.name));
    }
    if let Make::Cert(c) = &s.make {
        for ip in &c.ip_addresses {
            if ip.parse::<std::net::IpAddr>().is_err() {
                errs.push(format!("{at}: secret {:?}: {ip:?} is not an IP address", s.name));
            }
        }
    }
    if let Make::Hex { bytes } = s.make {
        if !(16..=256).contains(&bytes) {
            errs.push(format!("{at}: secret {:?}: hex bytes {bytes} not in 16..256", s.name));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn managed_paths() {
        for ok in ["/etc/etcd.env", "/var/lib/kdeploy-stdlib/applied/x", "/var/lib/kdeployed", "/opt/a b/c", "/etc/ü"]
        {
            assert_eq!(managed_path_problem(ok), None, "{ok}");
        }
        for (bad, why) in [
            ("etc/x", "absolute"),
            ("/", "absolute"),
            ("", "absolute"),
            ("/etc/../shadow", "normalised"),
            ("/etc/./x", "normalised"),
            ("/etc//x", "normalised"),
            ("/etc/x/", "normalised"),
            ("/etc/a\tb", "control character"),
            ("/etc/a\nb", "control character"),
            ("/etc/a\u{7f}b", "control character"),
            ("/etc/a\u{1}b", "control character"),
            ("/etc/a\0b", "control character"),
            ("/var/lib/kdeploy", "kdeploy's own state directory"),
            ("/var/lib/kdeploy/phases/etcd", "kdeploy's own state directory"),
            ("/proc/sys/kernel/x", "kernel file system"),
            ("/sys/x", "kernel file system"),
            ("/dev/sda", "kernel file system"),
        ] {
            let got = managed_path_problem(bad).unwrap_or_default();
            assert!(got.contains(why), "{bad:?}: {got:?}");
        }
        let long = format!("/{}", "a".repeat(256));
        assert!(managed_path_problem(&long).unwrap().contains("too long"));
        let deep = "/aaaaaaaa".repeat(460);
        assert!(managed_path_problem(&deep).unwrap().contains("too long"));
    }

    /// `pred` holds for every `ok` and for no `bad`.
    fn sorts(pred: fn(&str) -> bool, ok: &[&str], bad: &[&str]) {
        for s in ok {
            assert!(pred(s), "refused {s:?}");
        }
        for s in bad {
            assert!(!pred(s), "accepted {s:?}");
        }
    }

    #[test]
    fn modes_are_three_or_four_octal_digits() {
        sorts(
            is_octal_mode,
            &["644", "0644", "0755", "1777", "0000", "7777"],
            &["00644", "64", "", "0648", "u+x", "+644", "-644", " 644", "0o644", "0x44", "06444"],
        );
    }

    #[test]
    fn accounts() {
        let long = "a".repeat(33);
        sorts(
            is_account,
            &["root", "etcd", "_apt", "systemd-network", "a.b", "0", "65534"],
            &["", "-R", "--reference=/etc", "a:b", "a/b", "a b", "a\n", "1a", &long, "12345678901"],
        );
    }

    #[test]
    fn unit_names_as_systemd_reads_them() {
        assert_eq!(unit_kind("etcd.service"), Ok(UnitKind::Plain));
        assert_eq!(unit_kind("a.b-c_d:e\\x2d.timer"), Ok(UnitKind::Plain));
        assert_eq!(unit_kind("getty@.service"), Ok(UnitKind::Template));
        assert_eq!(unit_kind("getty@tty1.service"), Ok(UnitKind::Instance));
        assert_eq!(unit_kind("a@b@c.service"), Ok(UnitKind::Instance));
        for (bad, why) in [
            ("etcd", "must end in"),
            (".service", "must end in"),
            ("etcd.conf", "must end in"),
            ("etcd.device", "must end in"),
            ("@x.service", "may not come first"),
            ("a b.service", "not allowed"),
            ("a/b.service", "not allowed"),
            ("a;b.service", "not allowed"),
            ("a\n.service", "not allowed"),
        ] {
            let got = unit_kind(bad).unwrap_err().to_string();
            assert!(got.contains(why), "{bad:?}: {got}");
        }
        let long = format!("{}.service", "a".repeat(248));
        assert_eq!(long.len(), 256);
        assert_eq!(unit_kind(&long), Err(UnitName::TooLong));
        assert!(UnitName::TooLong.to_string().contains("longer than 255"));
        assert_eq!(unit_kind(&long[1..]), Ok(UnitKind::Plain));
    }

    #[test]
    fn phase_names_as_the_node_program_takes_them() {
        sorts(is_phase_name, &["etcd", "control-plane", "a.b_c@d"], &["", ".etcd", "-x", "a/b", "a b", "..", "a\nb"]);
    }
}
