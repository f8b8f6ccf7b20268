//! The manifest of one phase of one generation, as the node program reads it
//! (`stage`) and keeps it (`generations/<N>/<phase>/manifest`, readable back
//! with `manifest N PHASE`, so the previous state of a node never has to be
//! remembered by the deployer). A text format made for `sh`'s `read`:
//!
//! ```text
//! kdeploy-manifest 1
//! d<TAB>0700<TAB>root<TAB>root<TAB>/var/lib/etcd
//! f<TAB>0644<TAB>root<TAB>root<TAB><blake3-hex><TAB>/etc/etcd.env
//! u<TAB>etcd.service<TAB>restart<TAB>1<TAB><blake3 of text><TAB>/etc/etcd.env<TAB>/usr/local/bin/etcd
//! ```
//!
//! `u` lines describe units (on-change action, enabled, text hash, restart
//! triggers); the node ignores them — a unit's *file* is an ordinary `f` line
//! for `/etc/systemd/system/<name>`, so unit files switch with their phase.
//! `r` lines are the phase's reset hooks (`r TAB NAME TAB RUN TAB UNLESS`,
//! scripts with `\\`, `\t`, `\n`, `\r` escaped, an empty UNLESS for none),
//! kept with the generation so a node can be reset (or pruned) from what it
//! runs, without its closure; the node program ignores them too.
//! Paths are absolute, without tabs, newlines, `.` or `..` components.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use super::plan::{OnChange, UnitSpec};
use crate::store::Digest;

/// A regular file the phase puts at `path`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileEntry {
    pub path: String,
    /// Octal, e.g. "0644".
    pub mode: String,
    pub owner: String,
    pub group: String,
    /// blake3 of the content: the store blob.
    pub hash: Digest,
}

/// A directory the phase ensures (created, owner and mode set; never removed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DirEntry {
    pub path: String,
    pub mode: String,
    pub owner: String,
    pub group: String,
}

/// A hook the phase runs when it is reset (closure `when = "reset"`).
/// `delegate`: the node that runs it instead (a worker's drain runs on the
/// anchor, which holds the admin credentials), kept so that a node pruned
/// from the definition is still drained from where it can be.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ResetHook {
    pub name: String,
    pub run: String,
    pub unless: Option<String>,
    pub delegate: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Manifest {
    pub files: Vec<FileEntry>,
    pub directories: Vec<DirEntry>,
    pub units: Vec<UnitSpec>,
    pub resets: Vec<ResetHook>,
}

/// A script as one tab-free line of an `r` entry.
fn escape(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' => o += "\\\\",
            '\t' => o += "\\t",
            '\n' => o += "\\n",
            '\r' => o += "\\r",
            c => o.push(c),
        }
    }
    o
}

fn unescape(line: usize, s: &str) -> Result<String, ManifestError> {
    let mut o = String::with_capacity(s.len());
    let mut it = s.chars();
    while let Some(c) = it.next() {
        if c != '\\' {
            o.push(c);
            continue;
        }
        o.push(match it.next() {
            Some('\\') => '\\',
            Some('t') => '\t',
            Some('n') => '\n',
            Some('r') => '\r',
            _ => return Err(ManifestError::Parse { line, reason: "bad escape in a reset hook".into() }),
        });
    }
    Ok(o)
}

/// Where unit files live on a node.
pub const UNIT_DIR: &str = "/etc/systemd/system";

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ManifestError {
    #[error("manifest: bad path {0:?} (absolute, no tab/newline, no . or .. components)")]
    BadPath(String),
    #[error("manifest: bad {field} {value:?} for {path}")]
    BadField { path: String, field: &'static str, value: String },
    #[error("manifest: {path} appears twice")]
    Duplicate { path: String },
    #[error("manifest line {line}: {reason}")]
    Parse { line: usize, reason: String },
}

fn check_path(p: &str) -> Result<(), ManifestError> {
    let ok = p.starts_with('/')
        && p.len() > 1
        && !p.contains(['\t', '\n', '\r'])
        && p[1..].split('/').all(|c| !c.is_empty() && c != "." && c != "..");
    if ok {
        Ok(())
    } else {
        Err(ManifestError::BadPath(p.to_string()))
    }
}

fn check_word(path: &str, field: &'static str, v: &str) -> Result<(), ManifestError> {
    let ok = !v.is_empty() && !v.contains(|c: char| c.is_whitespace() || c == ':');
    if ok {
        Ok(())
    } else {
        Err(ManifestError::BadField { path: path.into(), field, value: v.into() })
    }
}

fn check_mode(path: &str, v: &str) -> Result<(), ManifestError> {
    let ok = (3..=4).contains(&v.len()) && v.bytes().all(|b| (b'0'..=b'7').contains(&b));
    if ok {
        Ok(())
    } else {
        Err(ManifestError::BadField { path: path.into(), field: "mode", value: v.into() })
    }
}

fn parse_hash(line: usize, v: &str) -> Result<Digest, ManifestError> {
    Digest::parse(v).ok_or_else(|| ManifestError::Parse { line, reason: format!("bad hash {v:?}") })
}

impl Manifest {
    /// Add a unit: its spec, and its file under [`UNIT_DIR`] (`text_hash` is
    /// the blob of its text).
    pub fn add_unit(&mut self, unit: UnitSpec) {
        self.files.push(FileEntry {
            path: format!("{UNIT_DIR}/{}", unit.name),
            mode: "0644".into(),
            owner: "root".into(),
            group: "root".into(),
            hash: unit.text_hash,
        });
        self.units.push(unit);
    }

    /// Check every field the node will trust.
    pub fn validate(&self) -> Result<(), ManifestError> {
        let mut seen = BTreeSet::new();
        for f in &self.files {
            check_path(&f.path)?;
            check_mode(&f.path, &f.mode)?;
            check_word(&f.path, "owner", &f.owner)?;
            check_word(&f.path, "group", &f.group)?;
            if !seen.insert(f.path.as_str()) {
                return Err(ManifestError::Duplicate { path: f.path.clone() });
            }
        }
        for d in &self.directories {
            check_path(&d.path)?;
            check_mode(&d.path, &d.mode)?;
            check_word(&d.path, "owner", &d.owner)?;
            check_word(&d.path, "group", &d.group)?;
        }
        for u in &self.units {
            let ok = !u.name.is_empty()
                && !u.name.starts_with(['.', '-'])
                && u.name.bytes().all(|b| b.is_ascii_alphanumeric() || b"._@-".contains(&b));
            if !ok {
                return Err(ManifestError::BadField {
                    path: u.name.clone(),
                    field: "unit name",
                    value: u.name.clone(),
                });
            }
            for t in &u.restart_triggers {
                check_path(&t.to_string_lossy())?;
            }
        }
        for r in &self.resets {
            let ok = !r.name.is_empty() && !r.name.contains(|c: char| c.is_control()) && !r.run.is_empty();
            let bad_delegate = r
                .delegate
                .as_ref()
                .is_some_and(|d| d.is_empty() || !d.bytes().all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b)));
            if !ok
                || bad_delegate
                || r.run.contains('\0')
                || r.unless.as_ref().is_some_and(|u| u.is_empty() || u.contains('\0'))
            {
                return Err(ManifestError::BadField {
                    path: r.name.clone(),
                    field: "reset hook",
                    value: r.name.clone(),
                });
            }
        }
        Ok(())
    }

    /// The text the node program reads (validated first).
    pub fn render(&self) -> Result<String, ManifestError> {
        self.validate()?;
        let mut s = String::from("kdeploy-manifest 1\n");
        for d in &self.directories {
            s += &format!("d\t{}\t{}\t{}\t{}\n", d.mode, d.owner, d.group, d.path);
        }
        for f in &self.files {
            s += &format!("f\t{}\t{}\t{}\t{}\t{}\n", f.mode, f.owner, f.group, f.hash.hex(), f.path);
        }
        for u in &self.units {
            let on = match u.on_change {
                OnChange::Restart => "restart",
                OnChange::Reload => "reload",
                OnChange::Nothing => "none",
            };
            s += &format!("u\t{}\t{}\t{}\t{}", u.name, on, u.enable as u8, u.text_hash.hex());
            for t in &u.restart_triggers {
                s += &format!("\t{}", t.to_string_lossy());
            }
            s += "\n";
        }
        for r in &self.resets {
            let unless = r.unless.as_deref().map(escape).unwrap_or_default();
            s += &format!("r\t{}\t{}\t{unless}", r.name, escape(&r.run));
            // a fifth field only when delegated: older manifests read the same
            if let Some(d) = &r.delegate {
                s += &format!("\t{d}");
            }
            s += "\n";
        }
        Ok(s)
    }

    /// Read a manifest back (from `manifest N PHASE`).
    pub fn parse(text: &str) -> Result<Manifest, ManifestError> {
        let mut lines = text.lines().enumerate();
        match lines.next() {
            Some((_, "kdeploy-manifest 1")) => {}
            _ => return Err(ManifestError::Parse { line: 1, reason: "not a kdeploy manifest v1".into() }),
        }
        let mut m = Manifest::default();
        for (i, line) in lines {
            let f: Vec<&str> = line.split('\t').collect();
            let err = |reason: &str| ManifestError::Parse { line: i + 1, reason: reason.into() };
            match f.as_slice() {
                ["d", mode, owner, group, path] => m.directories.push(DirEntry {
                    path: path.to_string(),
                    mode: mode.to_string(),
                    owner: owner.to_string(),
                    group: group.to_string(),
                }),
                ["f", mode, owner, group, hash, path] => m.files.push(FileEntry {
                    path: path.to_string(),
                    mode: mode.to_string(),
                    owner: owner.to_string(),
                    group: group.to_string(),
                    hash: parse_hash(i + 1, hash)?,
                }),
                ["u", name, on, enable, hash, triggers @ ..] => m.units.push(UnitSpec {
                    name: name.to_string(),
                    text_hash: parse_hash(i + 1, hash)?,
                    on_change: match *on {
                        "restart" => OnChange::Restart,
                        "reload" => OnChange::Reload,
                        "none" => OnChange::Nothing,
                        _ => return Err(err("bad onChange")),
                    },
                    enable: *enable == "1",
                    restart_triggers: triggers.iter().map(PathBuf::from).collect(),
                }),
                ["r", name, run, unless, delegate @ ..] if delegate.len() <= 1 => m.resets.push(ResetHook {
                    name: name.to_string(),
                    run: unescape(i + 1, run)?,
                    unless: (!unless.is_empty()).then(|| unescape(i + 1, unless)).transpose()?,
                    delegate: delegate.first().map(|d| d.to_string()),
                }),
                [""] => {}
                _ => return Err(err("unknown line")),
            }
        }
        m.validate()?;
        Ok(m)
    }

    /// The file entries by path.
    pub fn files_by_path(&self) -> BTreeMap<&str, &FileEntry> {
        self.files.iter().map(|f| (f.path.as_str(), f)).collect()
    }
}

/// Paths whose file was added, removed, or changed in content, mode or owner
/// between two manifests of a phase (`None`: the phase was not there).
pub fn changed_files(old: Option<&Manifest>, new: Option<&Manifest>) -> BTreeSet<PathBuf> {
    let empty = Manifest::default();
    let (a, b) = (old.unwrap_or(&empty).files_by_path(), new.unwrap_or(&empty).files_by_path());
    let mut out = BTreeSet::new();
    for (p, f) in &a {
        if b.get(p) != Some(f) {
            out.insert(PathBuf::from(p));
        }
    }
    for p in b.keys() {
        if !a.contains_key(p) {
            out.insert(PathBuf::from(p));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h(c: char) -> Digest {
        Digest([c as u8; 32])
    }

    fn sample() -> Manifest {
        let mut m = Manifest::default();
        m.directories.push(DirEntry {
            path: "/var/lib/x".into(),
            mode: "0700".into(),
            owner: "root".into(),
            group: "root".into(),
        });
        m.files.push(FileEntry {
            path: "/etc/x.conf".into(),
            mode: "0644".into(),
            owner: "root".into(),
            group: "root".into(),
            hash: h('a'),
        });
        m.add_unit(UnitSpec {
            name: "x.service".into(),
            text_hash: h('b'),
            on_change: OnChange::Restart,
            enable: true,
            restart_triggers: vec!["/etc/x.conf".into()],
        });
        m
    }

    #[test]
    fn render_parse_round_trip() {
        let m = sample();
        let text = m.render().unwrap();
        assert!(text.starts_with("kdeploy-manifest 1\nd\t0700\troot\troot\t/var/lib/x\n"));
        assert_eq!(Manifest::parse(&text).unwrap(), m);
    }

    #[test]
    fn reset_hooks_round_trip_as_one_line_each() {
        let mut m = sample();
        let run = "if [ -d /x ]; then\n\tprintf 'a\\tb\\n' >/y\r\nfi\\";
        m.resets.push(ResetHook {
            name: "x-reset".into(),
            run: run.into(),
            unless: Some("test -e /z\n".into()),
            delegate: None,
        });
        m.resets.push(ResetHook { name: "y".into(), run: "true".into(), ..Default::default() });
        m.resets.push(ResetHook {
            name: "z".into(),
            run: "drain".into(),
            delegate: Some("cp-1".into()),
            ..Default::default()
        });
        let text = m.render().unwrap();
        let r: Vec<&str> = text.lines().filter(|l| l.starts_with("r\t")).collect();
        assert_eq!(r.len(), 3);
        assert_eq!(r[1], "r\ty\ttrue\t");
        assert_eq!(r[2], "r\tz\tdrain\t\tcp-1");
        assert_eq!(Manifest::parse(&text).unwrap(), m);
        assert!(Manifest::parse("kdeploy-manifest 1\nr\tx\ta\\qb\t\n").is_err());
        m.resets[2].delegate = Some("../x".into());
        assert!(m.render().is_err(), "a delegate that is no node name");
        m.resets[2].delegate = None;
        m.resets[1].unless = Some(String::new());
        assert!(m.render().is_err());
    }

    #[test]
    fn rejects_bad_paths_and_fields() {
        for p in ["etc/x", "/etc/../x", "/etc/./x", "/etc//x", "/a\tb", "/"] {
            let mut m = sample();
            m.files[0].path = p.into();
            assert!(matches!(m.render(), Err(ManifestError::BadPath(_))), "{p}");
        }
        let mut m = sample();
        m.files[0].mode = "644x".into();
        assert!(m.render().is_err());
        let mut m = sample();
        m.files.push(m.files[0].clone());
        assert!(matches!(m.render(), Err(ManifestError::Duplicate { .. })));
    }

    #[test]
    fn changed_files_sees_content_mode_added_removed() {
        let old = sample();
        let mut new = sample();
        assert!(changed_files(Some(&old), Some(&new)).is_empty());
        new.files[0].mode = "0600".into();
        new.files.push(FileEntry {
            path: "/etc/y".into(),
            mode: "0644".into(),
            owner: "root".into(),
            group: "root".into(),
            hash: h('c'),
        });
        let c = changed_files(Some(&old), Some(&new));
        assert_eq!(c, ["/etc/x.conf", "/etc/y"].iter().map(PathBuf::from).collect());
        let gone = changed_files(Some(&old), None);
        assert_eq!(gone.len(), 2);
    }
}
