//! Variables from an inventory's `group_vars/` and `host_vars/`: for a group
//! (or host) NAME, the file `NAME.yml` / `NAME.yaml` / `NAME.json` / `NAME`,
//! or every file of the directory `NAME/` in name order (as Ansible loads
//! them, a later file overriding an earlier one). Each variable keeps the
//! file it came from, for the comments of the import.

use std::path::Path;

use serde_json::Value as Json;

/// One variable as found: its value and where.
#[derive(Debug, Clone, PartialEq)]
pub struct Assignment {
    pub var: String,
    pub value: Json,
    pub from: String,
}

/// The variables of `kind/name` (kind: group_vars or host_vars) under
/// `base`, weakest first. Nothing there: no variables.
pub fn read(base: &Path, kind: &str, name: &str) -> Result<Vec<Assignment>, String> {
    let dir = base.join(kind);
    let mut files = Vec::new();
    for ext in ["", ".yml", ".yaml", ".json"] {
        let f = dir.join(format!("{name}{ext}"));
        if f.is_file() {
            files.push(f);
        }
    }
    let sub = dir.join(name);
    if sub.is_dir() {
        let mut inner: Vec<_> = std::fs::read_dir(&sub)
            .map_err(|e| format!("{}: {e}", sub.display()))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.is_file() && !p.file_name().is_some_and(|n| n.to_string_lossy().starts_with('.')))
            .collect();
        inner.sort();
        files.extend(inner);
    }
    let mut out = Vec::new();
    for f in files {
        let shown = f.strip_prefix(base).unwrap_or(&f).display().to_string();
        let text = std::fs::read_to_string(&f).map_err(|e| format!("{shown}: {e}"))?;
        let doc = yaml_to_json(&text).map_err(|e| format!("{shown}: {e}"))?;
        match doc {
            Json::Null => {}
            Json::Object(m) => {
                out.extend(m.into_iter().map(|(var, value)| Assignment { var, value, from: shown.clone() }))
            }
            _ => return Err(format!("{shown}: expected a mapping of variables")),
        }
    }
    Ok(out)
}

/// A YAML document as JSON (YAML's own tags, e.g. Ansible's `!vault`, are
/// refused by name).
pub fn yaml_to_json(text: &str) -> Result<Json, String> {
    let v: serde_yaml_ng::Value = serde_yaml_ng::from_str(text).map_err(|e| e.to_string())?;
    to_json(v)
}

fn to_json(v: serde_yaml_ng::Value) -> Result<Json, String> {
    use serde_yaml_ng::Value as Y;
    Ok(match v {
        Y::Null => Json::Null,
        Y::Bool(b) => Json::Bool(b),
        Y::Number(n) => serde_json::to_value(&n).map_err(|e| e.to_string())?,
        Y::String(s) => Json::String(s),
        Y::Sequence(items) => Json::Array(items.into_iter().map(to_json).collect::<Result<_, _>>()?),
        Y::Mapping(m) => {
            let mut o = serde_json::Map::new();
            for (k, v) in m {
                let k = match k {
                    Y::String(s) => s,
                    Y::Number(n) => n.to_string(),
                    Y::Bool(b) => b.to_string(),
                    other => return Err(format!("a mapping key that is not a string: {other:?}")),
                };
                o.insert(k, to_json(v)?);
            }
            Json::Object(o)
        }
        Y::Tagged(t) => return Err(format!("the YAML tag {} is not supported (decrypt vault values first)", t.tag)),
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
        let all = read(d.path(), "group_vars", "all").unwrap();
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
        assert_eq!(read(d.path(), "group_vars", "etcd").unwrap()[0].value, Json::from("/data/etcd"));
        assert!(read(d.path(), "group_vars", "kube_node").unwrap().is_empty());
    }

    #[test]
    fn vault_values_are_refused_by_name() {
        let e = yaml_to_json("secret: !vault |\n  $ANSIBLE_VAULT;1.1;AES256\n  6162\n").unwrap_err();
        assert!(e.contains("!vault"), "{e}");
    }
}
