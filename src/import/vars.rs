//! Variables from an inventory's `group_vars/` and `host_vars/`: for a group
//! (or host) NAME, the file `NAME.yml` / `NAME.yaml` / `NAME.json` / `NAME`,
//! or every file of the directory `NAME/` in name order (as Ansible loads
//! them, a later file overriding an earlier one). Each variable keeps the
//! file it came from, for the comments of the import.
//!
//! The inventory is untrusted: a file is read only where it resolves to
//! inside the inventory directory ([`Root`]), so neither a name nor a
//! symlink reads a file outside it, and only up to [`MAX_FILE`] bytes.

use std::io::Read;
use std::path::{Path, PathBuf};

use serde_json::Value as Json;

use super::error::Error;
use super::inventory::check_name;
use crate::nix_text::shown;

/// The most of one inventory file that is read.
pub const MAX_FILE: u64 = 16 << 20;

/// One variable as found: its value and where.
#[derive(Debug, Clone, PartialEq)]
pub struct Assignment {
    pub var: String,
    pub value: Json,
    pub from: String,
}

/// The inventory directory, resolved: every file read from it must
/// resolve to inside it.
#[derive(Debug, Clone)]
pub struct Root {
    dir: PathBuf,
}

impl Root {
    pub fn new(dir: &Path) -> Result<Root, Error> {
        let dir = dir.canonicalize().map_err(|e| unreadable(dir, e))?;
        Ok(Root { dir })
    }

    /// Whether `rel` exists (through symlinks).
    pub fn exists(&self, rel: &Path) -> bool {
        self.dir.join(rel).exists()
    }

    /// Where `rel` resolves to, refused if that is outside the inventory.
    fn confine(&self, rel: &Path) -> Result<PathBuf, Error> {
        let real = self.dir.join(rel).canonicalize().map_err(|e| unreadable(rel, e))?;
        if !real.starts_with(&self.dir) {
            return Err(Error::Outside { path: shown_path(rel), real: shown_path(&real) });
        }
        Ok(real)
    }

    /// The text of the file `rel`, if it resolves to inside the inventory
    /// and is no larger than [`MAX_FILE`].
    pub fn read(&self, rel: &Path) -> Result<String, Error> {
        let real = self.confine(rel)?;
        let mut text = String::new();
        let f = std::fs::File::open(&real).map_err(|e| unreadable(rel, e))?;
        f.take(MAX_FILE + 1).read_to_string(&mut text).map_err(|e| unreadable(rel, e))?;
        if text.len() as u64 > MAX_FILE {
            return Err(Error::TooLarge { path: shown_path(rel) });
        }
        Ok(text)
    }

    /// Whether `rel` is a file (through symlinks), refused if it resolves
    /// to outside the inventory.
    pub fn is_file(&self, rel: &Path) -> Result<bool, Error> {
        Ok(self.exists(rel) && self.confine(rel)?.is_file())
    }

    /// The files of the directory `rel` (not those starting with `.`), by
    /// name; none if it is not a directory; refused if it or one of them
    /// resolves to outside the inventory.
    fn files_in(&self, rel: &Path) -> Result<Vec<PathBuf>, Error> {
        if !self.exists(rel) || !self.confine(rel)?.is_dir() {
            return Ok(Vec::new());
        }
        let entries = std::fs::read_dir(self.dir.join(rel)).map_err(|e| unreadable(rel, e))?;
        let mut names: Vec<_> = entries
            .filter_map(|e| e.ok().map(|e| e.file_name()))
            .filter(|n| !n.to_string_lossy().starts_with('.'))
            .collect();
        names.sort();
        let mut out = Vec::new();
        for n in names {
            let f = rel.join(n);
            if self.is_file(&f)? {
                out.push(f);
            }
        }
        Ok(out)
    }
}

/// A path as shown in a message.
fn shown_path(p: &Path) -> String {
    shown(&p.display().to_string())
}

fn unreadable(p: &Path, e: std::io::Error) -> Error {
    Error::Read { path: shown_path(p), reason: e.to_string() }
}

/// The variables of `kind/name` (kind: group_vars or host_vars) in the
/// inventory, weakest first. Nothing there: no variables.
pub fn read(root: &Root, kind: &str, name: &str) -> Result<Vec<Assignment>, Error> {
    check_name(if kind == "host_vars" { "host" } else { "group" }, name)?;
    let dir = Path::new(kind);
    let mut files = Vec::new();
    for ext in ["", ".yml", ".yaml", ".json"] {
        let f = dir.join(format!("{name}{ext}"));
        if root.is_file(&f)? {
            files.push(f);
        }
    }
    files.extend(root.files_in(&dir.join(name))?);
    let mut out = Vec::new();
    for f in files {
        let from = f.display().to_string();
        let text = root.read(&f)?;
        let doc = yaml_to_json(&text).map_err(|e| e.in_file(shown_path(&f)))?;
        match doc {
            Json::Null => {}
            Json::Object(m) => {
                out.extend(m.into_iter().map(|(var, value)| Assignment { var, value, from: from.clone() }))
            }
            _ => return Err(Error::NotVariables.in_file(shown_path(&f))),
        }
    }
    Ok(out)
}

/// A YAML document as JSON (YAML's own tags, e.g. Ansible's `!vault`, are
/// refused by name).
pub fn yaml_to_json(text: &str) -> Result<Json, Error> {
    let v: serde_yaml_ng::Value = serde_yaml_ng::from_str(text).map_err(yaml)?;
    to_json(v)
}

fn yaml(e: impl std::fmt::Display) -> Error {
    Error::Yaml { reason: e.to_string() }
}

fn to_json(v: serde_yaml_ng::Value) -> Result<Json, Error> {
    use serde_yaml_ng::Value as Y;
    Ok(match v {
        Y::Null => Json::Null,
        Y::Bool(b) => Json::Bool(b),
        Y::Number(n) => serde_json::to_value(&n).map_err(yaml)?,
        Y::String(s) => Json::String(s),
        Y::Sequence(items) => Json::Array(items.into_iter().map(to_json).collect::<Result<_, _>>()?),
        Y::Mapping(m) => {
            let mut o = serde_json::Map::new();
            for (k, v) in m {
                let k = match k {
                    Y::String(s) => s,
                    Y::Number(n) => n.to_string(),
                    Y::Bool(b) => b.to_string(),
                    other => return Err(Error::YamlKey { key: format!("{other:?}") }),
                };
                o.insert(k, to_json(v)?);
            }
            Json::Object(o)
        }
        Y::Tagged(t) => return Err(Error::YamlTag { tag: t.tag.to_string() }),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_and_directory_in_name_order() {
        let d = tempfile::tempdir().unwrap();
        let gv = d.path().join("group_vars");
        std::fs::create_dir_all(gv.join("all")).unwrap();
        std::fs::write(gv.join("all/b.yml"), "x: 2\ny: [1, 2]\n").unwrap();
        std::fs::write(gv.join("all/a.yml"), "x: 1\n---\n").unwrap_or(());
        std::fs::write(gv.join("all/a.yml"), "x: 1\nz: {k: v}\n").unwrap();
        std::fs::write(gv.join("etcd.yml"), "etcd_data_dir: /data/etcd\n").unwrap();
        let root = Root::new(d.path()).unwrap();
        let all = read(&root, "group_vars", "all").unwrap();
        let names: Vec<(&str, &str)> = all.iter().map(|a| (a.var.as_str(), a.from.as_str())).collect();
        assert_eq!(
            names,
            [
                ("x", "group_vars/all/a.yml"),
                ("z", "group_vars/all/a.yml"),
                ("x", "group_vars/all/b.yml"),
                ("y", "group_vars/all/b.yml")
            ]
        );
        assert_eq!(read(&root, "group_vars", "etcd").unwrap()[0].value, Json::from("/data/etcd"));
        assert!(read(&root, "group_vars", "kube_node").unwrap().is_empty());
    }

    #[test]
    fn vault_values_are_refused_by_name() {
        let e = yaml_to_json("secret: !vault |\n  $ANSIBLE_VAULT;1.1;AES256\n  6162\n").unwrap_err();
        assert!(matches!(&e, Error::YamlTag { tag } if tag == "!vault"), "{e:?}");
        assert!(e.to_string().contains("!vault"), "{e}");
    }
}
