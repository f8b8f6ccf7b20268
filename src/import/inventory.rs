//! An Ansible inventory as Kubespray users write it: `inventory.ini`
//! (`[group]` host lines with inline `key=value` variables, `[group:children]`,
//! `[group:vars]`) or `hosts.yaml` (`all: { hosts; children; vars }`), read
//! into hosts with their inline variables and groups with their hosts,
//! child groups and variables. Host ranges (`node[1:3]`) are refused with a
//! clear error rather than guessed, and so is a host or group name that
//! could not name its own file under host_vars/ or group_vars/ ([`check_name`]:
//! the inventory is untrusted, and `../x` would name a file outside it).

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value as Json;

use super::error::Error;
use crate::nix_text::{is_hidden, visible};

pub type Vars = BTreeMap<String, Json>;

#[derive(Debug, Default, Clone, PartialEq)]
pub struct Group {
    pub hosts: BTreeSet<String>,
    pub children: BTreeSet<String>,
    pub vars: Vars,
}

#[derive(Debug, Default, Clone, PartialEq)]
pub struct Inventory {
    /// Host name → its inline variables, in the order first seen.
    pub hosts: Vec<(String, Vars)>,
    pub groups: BTreeMap<String, Group>,
}

impl Inventory {
    fn host_mut(&mut self, name: &str) -> &mut Vars {
        if let Some(i) = self.hosts.iter().position(|(n, _)| n == name) {
            return &mut self.hosts[i].1;
        }
        self.hosts.push((name.to_string(), Vars::new()));
        &mut self.hosts.last_mut().expect("just pushed").1
    }

    /// Every host of `group` and of its child groups, recursively.
    pub fn members(&self, group: &str) -> BTreeSet<String> {
        let mut out = BTreeSet::new();
        let mut seen = BTreeSet::new();
        let mut todo = vec![group.to_string()];
        while let Some(g) = todo.pop() {
            if !seen.insert(g.clone()) {
                continue;
            }
            if let Some(gr) = self.groups.get(&g) {
                out.extend(gr.hosts.iter().cloned());
                todo.extend(gr.children.iter().cloned());
            }
        }
        out
    }

    /// Whether `host` is in `group` (directly or through a child group).
    pub fn in_group(&self, host: &str, group: &str) -> bool {
        self.members(group).contains(host)
    }
}

/// Whether `name` (of a host or, `kind` "group", a group) can name its file
/// in host_vars/ or group_vars/: not empty, `.` or `..`, without `/` or `\\`
/// and without a control or other hidden character.
pub fn check_name(kind: &'static str, name: &str) -> Result<(), Error> {
    let bad =
        name.is_empty() || name == "." || name == ".." || name.contains(['/', '\\']) || name.chars().any(is_hidden);
    if bad {
        return Err(Error::Name { kind, name: visible(name) });
    }
    Ok(())
}

/// An inline value as Ansible reads it on a host line: true/false and
/// integers are typed, everything else is a string.
fn typed(v: &str) -> Json {
    match v {
        "true" | "True" | "yes" => Json::Bool(true),
        "false" | "False" | "no" => Json::Bool(false),
        _ => v.parse::<i64>().map(Json::from).unwrap_or_else(|_| Json::String(v.to_string())),
    }
}

/// `a=1 b='two words'` → words, quotes removed; a `#` that starts a word
/// begins a comment.
fn words(line: &str) -> Result<Vec<String>, Error> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quote: Option<char> = None;
    let mut in_word = false;
    for c in line.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => cur.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                in_word = true;
            }
            (None, '#') if !in_word => break,
            (None, c) if c.is_whitespace() => {
                if in_word {
                    out.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            (None, c) => {
                cur.push(c);
                in_word = true;
            }
        }
    }
    if quote.is_some() {
        return Err(Error::UnclosedQuote { line: line.to_string() });
    }
    if in_word {
        out.push(cur);
    }
    Ok(out)
}

/// `inventory.ini`.
pub fn parse_ini(text: &str) -> Result<Inventory, Error> {
    enum Section {
        Hosts(String),
        Children(String),
        Vars(String),
    }
    let mut inv = Inventory::default();
    let mut section = Section::Hosts("ungrouped".to_string());
    for (n, raw) in text.lines().enumerate() {
        let at = |e| Error::Line { line: n + 1, error: Box::new(e) };
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        if let Some(head) = line.strip_prefix('[').and_then(|l| l.split(']').next()) {
            let (name, kind) = head.split_once(':').unwrap_or((head, ""));
            let name = name.trim().to_string();
            check_name("group", &name).map_err(at)?;
            inv.groups.entry(name.clone()).or_default();
            section = match kind {
                "" => Section::Hosts(name),
                "children" => Section::Children(name),
                "vars" => Section::Vars(name),
                other => return Err(at(Error::Section { head: head.to_string(), kind: other.to_string() })),
            };
            continue;
        }
        match &section {
            Section::Hosts(g) => {
                let w = words(line).map_err(at)?;
                let Some((host, vars)) = w.split_first() else { continue };
                if host.contains('[') {
                    return Err(at(Error::HostRange { host: visible(host) }));
                }
                check_name("host", host).map_err(at)?;
                inv.groups.get_mut(g).expect("made at its header").hosts.insert(host.clone());
                let hv = inv.host_mut(host);
                for kv in vars {
                    let (k, v) = kv.split_once('=').ok_or_else(|| at(Error::KeyValue { got: kv.clone() }))?;
                    hv.insert(k.to_string(), typed(v));
                }
            }
            Section::Children(g) => {
                let child = words(line).map_err(at)?.into_iter().next().unwrap_or_default();
                check_name("group", &child).map_err(at)?;
                inv.groups.entry(child.clone()).or_default();
                inv.groups.get_mut(g).expect("made at its header").children.insert(child);
            }
            Section::Vars(g) => {
                let (k, v) = line.split_once('=').ok_or_else(|| at(Error::KeyValue { got: line.to_string() }))?;
                let v = words(v.trim()).map_err(at)?.join(" ");
                inv.groups.get_mut(g).expect("made at its header").vars.insert(k.trim().to_string(), Json::String(v));
            }
        }
    }
    Ok(inv)
}

/// `hosts.yaml` (the YAML inventory format, as Kubespray's inventory
/// builder writes it), already read into JSON.
pub fn parse_yaml(doc: &Json) -> Result<Inventory, Error> {
    let mut inv = Inventory::default();
    let all = doc.get("all").ok_or(Error::NoAll)?;
    walk_group(&mut inv, "all", all)?;
    Ok(inv)
}

fn walk_group(inv: &mut Inventory, name: &str, node: &Json) -> Result<(), Error> {
    check_name("group", name)?;
    inv.groups.entry(name.to_string()).or_default();
    let Some(obj) = node.as_object() else { return Ok(()) }; // `group:` with nothing under it
    if let Some(hosts) = obj.get("hosts").and_then(Json::as_object) {
        for (h, vars) in hosts {
            check_name("host", h)?;
            inv.groups.get_mut(name).expect("made above").hosts.insert(h.clone());
            let hv = inv.host_mut(h);
            if let Some(vars) = vars.as_object() {
                hv.extend(vars.iter().map(|(k, v)| (k.clone(), v.clone())));
            }
        }
    }
    if let Some(vars) = obj.get("vars").and_then(Json::as_object) {
        inv.groups.get_mut(name).expect("made above").vars.extend(vars.iter().map(|(k, v)| (k.clone(), v.clone())));
    }
    if let Some(children) = obj.get("children").and_then(Json::as_object) {
        for (c, sub) in children {
            inv.groups.get_mut(name).expect("made above").children.insert(c.clone());
            walk_group(inv, c, sub)?;
        }
    }
    for k in obj.keys() {
        if !["hosts", "vars", "children"].contains(&k.as_str()) {
            return Err(Error::GroupKey { group: name.to_string(), key: visible(k) });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const INI: &str = "
# comment
[kube_control_plane]
node1 ansible_host=95.54.0.12 ip=10.3.0.1 etcd_member_name=etcd1
node2 ansible_host=95.54.0.13  ip=10.3.0.2 ansible_port=2222 # trailing comment

[etcd:children]
kube_control_plane

[kube_node]
node3 ansible_host=95.54.0.15 ip='10.3.0.3'

[k8s_cluster:children]
kube_control_plane
kube_node

[kube_node:vars]
kubelet_max_pods=200
";

    #[test]
    fn ini_hosts_groups_children_vars() {
        let inv = parse_ini(INI).unwrap();
        assert_eq!(inv.hosts.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>(), ["node1", "node2", "node3"]);
        assert_eq!(inv.hosts[1].1["ansible_port"], Json::from(2222));
        assert_eq!(inv.hosts[2].1["ip"], Json::from("10.3.0.3"));
        assert!(inv.in_group("node2", "etcd"));
        assert!(!inv.in_group("node3", "etcd"));
        assert_eq!(inv.members("k8s_cluster").len(), 3);
        assert_eq!(inv.groups["kube_node"].vars["kubelet_max_pods"], Json::from("200"));
    }

    #[test]
    fn ini_refuses_ranges() {
        let e = parse_ini("[kube_node]\nnode[1:3]\n").unwrap_err();
        assert!(matches!(&e, Error::Line { line: 2, error } if matches!(**error, Error::HostRange { .. })), "{e:?}");
        assert!(e.to_string().contains("host range"));
    }

    #[test]
    fn names_that_cannot_name_a_file_are_refused() {
        for bad in ["../../x", "a/b", "..", ".", "", "a\\b", "a\u{1b}b", "a\nb", "a\u{202e}b"] {
            let e = check_name("host", bad).unwrap_err().to_string();
            assert!(e.starts_with("host name \""), "{e}");
            assert!(!e.chars().any(is_hidden), "{e:?}");
        }
        for good in ["node1", "cp-1.example.com", "10.0.0.1", "..x", "é"] {
            check_name("host", good).unwrap();
        }
        let refused = |text: &str| parse_ini(text).unwrap_err().to_string();
        assert!(refused("[kube_node]\n../x ansible_host=1.2.3.4\n").contains("host name \"../x\""));
        assert!(refused("[../g]\nnode1\n").contains("group name"));
        assert!(refused("[k8s_cluster:children]\n../g\n").contains("group name"));
        let doc = serde_json::json!({"all": {"hosts": {"../x": null}}});
        assert!(matches!(parse_yaml(&doc), Err(Error::Name { kind: "host", .. })));
        let doc = serde_json::json!({"all": {"children": {"a/b": null}}});
        assert!(matches!(parse_yaml(&doc), Err(Error::Name { kind: "group", .. })));
    }

    #[test]
    fn yaml_inventory() {
        let doc = serde_json::json!({"all": {
        "hosts": {"node1": {"ansible_host": "10.0.0.1", "ip": "10.0.0.1"}, "node2": {"ansible_host": "10.0.0.2"}},
        "children": {
            "kube_control_plane": {"hosts": {"node1": null}},
            "kube_node": {"hosts": {"node2": null}},
            "etcd": {"hosts": {"node1": null}},
            "k8s_cluster": {"children": {"kube_control_plane": null, "kube_node": null}},
            "calico_rr": {"hosts": {}}
        }}});
        let inv = parse_yaml(&doc).unwrap();
        assert!(inv.in_group("node2", "k8s_cluster"));
        assert!(inv.in_group("node1", "etcd"));
        assert_eq!(inv.hosts.len(), 2);
    }
}
