//! `kdeploy import kubespray`: a Kubespray inventory directory (inventory.ini
//! or hosts.yaml, group_vars/, host_vars/) turned into a kdeploy cluster.
//! Groups give roles (kube_control_plane → control-plane, etcd → etcd,
//! kube_node → worker); `ip`, else `ansible_host`, the address; variables
//! become settings by the Kubespray name each option declares (`kubespray`
//! in `kd.options`) — at the cluster (all, k8s_cluster), role (etcd,
//! kube_control_plane, kube_node) or node (host line, host_vars) level.
//! Nothing is dropped silently: a Jinja template, a variable kdeploy has no
//! option for, or a value an option refuses is listed in [`Imported::skipped`]
//! with the reason. Rendering ([`render`]) is pure; the CLI evaluates the
//! result and moves any setting the stdlib refuses to the skipped list.

pub mod data_only;
mod error;
pub mod inventory;
mod render;
pub mod vars;

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value as Json;

use crate::nix_text::shown;
pub use error::{Error, NotData};
use inventory::Inventory;
pub use render::render;
use vars::{Assignment, Root};

/// What the import needs to know of an option.
#[derive(Debug, Clone)]
pub struct OptionRef {
    pub path: String,
    /// "cluster" (settings only) or "node".
    pub scope: String,
    pub ty: String,
}

/// One setting to write, and the variable it comes from.
#[derive(Debug, Clone, PartialEq)]
pub struct Setting {
    pub path: String,
    pub value: Json,
    pub var: String,
    pub from: String,
}

/// A variable that is not imported, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct Skipped {
    pub var: String,
    pub value: Json,
    pub from: String,
    pub why: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    pub name: String,
    pub address: String,
    pub roles: Vec<&'static str>,
    pub settings: Vec<Setting>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Imported {
    pub name: String,
    pub source: String,
    pub nodes: Vec<Node>,
    pub settings: Vec<Setting>,
    /// kdeploy role → its settings.
    pub roles: BTreeMap<&'static str, Vec<Setting>>,
    pub skipped: Vec<Skipped>,
}

/// Where a setting sits in an [`Imported`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SettingAt {
    Cluster(usize),
    Role(&'static str, usize),
    Node(usize, usize),
}

impl Imported {
    /// Move a setting the stdlib refused to the skipped list, with the reason.
    pub fn refuse(&mut self, at: SettingAt, why: &str) {
        let s = match at {
            SettingAt::Cluster(i) => self.settings.remove(i),
            SettingAt::Role(r, i) => self.roles.get_mut(r).expect("a role of the import").remove(i),
            SettingAt::Node(n, i) => self.nodes[n].settings.remove(i),
        };
        self.skipped.push(Skipped { var: s.var, value: s.value, from: s.from, why: why.to_string() });
    }
}

/// Kubespray's groups (and their older names) and the kdeploy role each gives.
const ROLE_GROUPS: &[(&str, &str)] = &[
    ("kube_control_plane", "control-plane"),
    ("kube-master", "control-plane"),
    ("etcd", "etcd"),
    ("kube_node", "worker"),
    ("kube-node", "worker"),
];
const CLUSTER_GROUPS: &[&str] = &["all", "k8s_cluster", "k8s-cluster"];

/// Variables about reaching a host, handled by the import itself.
const ADDRESS_VARS: &[&str] = &["ip", "ansible_host"];
const ANSIBLE_ONLY: &[(&str, &str)] = &[
    ("access_ip", "kdeploy reaches and names every node by its `address`"),
    ("ansible_connection", "kdeploy always connects with SSH"),
    ("ansible_python_interpreter", "kdeploy needs no Python on the nodes"),
];

/// The inventory file of `dir`, parsed.
fn read_inventory(dir: &Path, root: &Root) -> Result<(Inventory, String), Error> {
    for name in ["inventory.ini", "hosts.ini", "hosts.yaml", "hosts.yml", "inventory.yaml", "inventory.yml"] {
        if !root.is_file(Path::new(name))? {
            continue;
        }
        let text = root.read(Path::new(name))?;
        let inv = if name.ends_with(".ini") {
            inventory::parse_ini(&text)
        } else {
            vars::yaml_to_json(&text).and_then(|doc| inventory::parse_yaml(&doc))
        };
        return inv.map(|i| (i, name.to_string())).map_err(|e| e.in_file(name));
    }
    Err(Error::NoInventory { dir: shown(&dir.display().to_string()) })
}

/// A DNS-1123 label from the inventory directory's name.
fn cluster_name(dir: &Path) -> String {
    let raw = dir.canonicalize().ok().and_then(|d| d.file_name().map(|n| n.to_string_lossy().to_lowercase()));
    let mut s: String =
        raw.unwrap_or_default().chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '-' }).collect();
    s = s.trim_matches('-').chars().take(63).collect();
    if s.is_empty() || !s.starts_with(|c: char| c.is_ascii_alphabetic()) {
        s = format!("k8s-{s}").trim_end_matches('-').to_string();
    }
    s
}

/// Read the inventory at `dir` and map it onto `options` (by Kubespray name).
pub fn kubespray(dir: &Path, options: &BTreeMap<String, OptionRef>) -> Result<Imported, Error> {
    let root = Root::new(dir)?;
    let (inv, inv_file) = read_inventory(dir, &root)?;
    let mut out = Imported {
        name: cluster_name(dir),
        source: dir.display().to_string(),
        nodes: Vec::new(),
        settings: Vec::new(),
        roles: BTreeMap::new(),
        skipped: Vec::new(),
    };
    let group_vars = |g: &str| -> Result<Vec<Assignment>, Error> {
        let mut a: Vec<Assignment> = inv.groups.get(g).map_or(vec![], |gr| {
            gr.vars
                .iter()
                .map(|(k, v)| Assignment { var: k.clone(), value: v.clone(), from: format!("{inv_file} [{g}:vars]") })
                .collect()
        });
        a.extend(vars::read(&root, "group_vars", g)?);
        Ok(a)
    };
    let mut cluster = Vec::new();
    for g in CLUSTER_GROUPS {
        cluster.extend(group_vars(g)?);
    }
    out.settings = take_all(last_wins(cluster), options, Level::Cluster, &mut out.skipped);
    for (g, role) in ROLE_GROUPS {
        let a = group_vars(g)?;
        if !a.is_empty() {
            let s = take_all(last_wins(a), options, Level::Role(role), &mut out.skipped);
            out.roles.entry(role).or_default().extend(s);
        }
    }
    for (host, inline) in &inv.hosts {
        let mut roles: Vec<&'static str> =
            ROLE_GROUPS.iter().filter(|(g, _)| inv.in_group(host, g)).map(|(_, r)| *r).collect();
        roles.dedup();
        let mut a: Vec<Assignment> = inline
            .iter()
            .map(|(k, v)| Assignment { var: k.clone(), value: v.clone(), from: inv_file.clone() })
            .collect();
        a.extend(vars::read(&root, "host_vars", host)?);
        let a = last_wins(a);
        let address = ["ip", "ansible_host"]
            .iter()
            .find_map(|k| a.iter().find(|x| x.var == *k).and_then(|x| x.value.as_str().map(str::to_string)))
            .or_else(|| host.parse::<std::net::Ipv4Addr>().ok().map(|_| host.clone()));
        if roles.is_empty() {
            continue; // in no Kubernetes group: not a node of this cluster (e.g. a bastion)
        }
        let Some(address) = address else {
            return Err(Error::NoAddress { host: shown(host), file: inv_file });
        };
        let rest: Vec<Assignment> = a.into_iter().filter(|x| !ADDRESS_VARS.contains(&x.var.as_str())).collect();
        let settings = take_all(rest, options, Level::Node(host), &mut out.skipped);
        out.nodes.push(Node { name: host.clone(), address, roles, settings });
    }
    if out.nodes.is_empty() {
        return Err(Error::NoNodes { file: inv_file });
    }
    Ok(out)
}

/// Per variable, the strongest assignment (the last), in first-seen order.
fn last_wins(a: Vec<Assignment>) -> Vec<Assignment> {
    let mut out: Vec<Assignment> = Vec::new();
    for x in a {
        match out.iter_mut().find(|o| o.var == x.var) {
            Some(o) => *o = x,
            None => out.push(x),
        }
    }
    out
}

#[derive(Clone, Copy)]
enum Level<'a> {
    Cluster,
    Role(&'a str),
    Node(&'a str),
}

fn take_all(
    a: Vec<Assignment>,
    options: &BTreeMap<String, OptionRef>,
    level: Level<'_>,
    skipped: &mut Vec<Skipped>,
) -> Vec<Setting> {
    let mut out: Vec<Setting> = Vec::new();
    for x in a {
        match take(&x, options, level) {
            Ok(s) => {
                // one option from two variables (ansible_become, ansible_become_method): the later
                for new in s {
                    if let Some(i) = out.iter().position(|o| o.path == new.path) {
                        let old = out.remove(i);
                        let why = format!("{} ({}) sets the same option", new.var, new.from);
                        skipped.push(Skipped { var: old.var, value: old.value, from: old.from, why });
                    }
                    out.push(new);
                }
            }
            Err(why) => skipped.push(Skipped { var: x.var, value: x.value, from: x.from, why: why.to_string() }),
        }
    }
    out
}

/// Whether a string in `v` (with `keys`, also an attribute name) is one `f` holds for.
fn any_string(v: &Json, keys: bool, f: &impl Fn(&str) -> bool) -> bool {
    match v {
        Json::String(s) => f(s),
        Json::Array(a) => a.iter().any(|v| any_string(v, keys, f)),
        Json::Object(m) => m.iter().any(|(k, v)| (keys && f(k)) || any_string(v, keys, f)),
        _ => false,
    }
}

fn is_template(v: &Json) -> bool {
    any_string(v, false, &|s| s.contains("{{") || s.contains("{%"))
}

/// The settings one variable gives at `level`, or why it gives none.
fn take(x: &Assignment, options: &BTreeMap<String, OptionRef>, level: Level<'_>) -> Result<Vec<Setting>, Skip> {
    if let Some((_, why)) = ANSIBLE_ONLY.iter().find(|(v, _)| *v == x.var) {
        return Err(Skip::AnsibleOnly(why));
    }
    if is_template(&x.value) {
        return Err(Skip::Template);
    }
    if any_string(&x.value, true, &|s| s.contains('\0')) {
        return Err(Skip::Nul);
    }
    // Kubespray's plays become root; `ansible_become: false` turns that off
    if x.var == "ansible_become" {
        return match x.value {
            Json::Bool(false) => Ok(vec![Setting {
                path: "ssh.become".into(),
                value: "none".into(),
                var: x.var.clone(),
                from: x.from.clone(),
            }]),
            _ => Err(Skip::Become),
        };
    }
    let one = |o: &OptionRef, value: &Json| -> Result<Setting, Skip> {
        if o.scope == "cluster" && !matches!(level, Level::Cluster) {
            let here = match level {
                Level::Role(r) => format!("the role {r}"),
                Level::Node(n) => format!("the node {n}"),
                Level::Cluster => unreachable!(),
            };
            return Err(Skip::ClusterWide { path: o.path.clone(), here });
        }
        // the option system reads a set with `_type` as an override (mkOverride), not as data
        if value.get("_type").is_some() {
            return Err(Skip::Override);
        }
        let value = match value {
            Json::String(s) if o.ty.starts_with("a version") => Json::String(s.trim_start_matches('v').to_string()),
            v => v.clone(),
        };
        Ok(Setting { path: o.path.clone(), value, var: x.var.clone(), from: x.from.clone() })
    };
    if let Some(o) = options.get(&x.var) {
        return one(o, &x.value).map(|s| vec![s]);
    }
    // `loadbalancer_apiserver: { address; port; }`: options named by `var.key`
    if let Json::Object(m) = &x.value {
        let parts: Vec<_> = m.iter().map(|(k, v)| (options.get(&format!("{}.{k}", x.var)), v)).collect();
        if !parts.is_empty() && parts.iter().all(|(o, _)| o.is_some()) {
            return parts.into_iter().map(|(o, v)| one(o.expect("checked"), v)).collect();
        }
    }
    Err(Skip::NoOption)
}

/// Why a variable gives no setting (listed with it in the import).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
enum Skip {
    /// About Ansible itself; why kdeploy needs no such thing.
    #[error("{0}")]
    AnsibleOnly(&'static str),
    #[error("a Jinja template: write the value it stands for")]
    Template,
    #[error("a NUL character, which a Nix string cannot hold")]
    Nul,
    #[error("kdeploy escalates a login other than root by default (ssh.become = \"sudo\")")]
    Become,
    #[error("{path} is cluster-wide in kdeploy and cannot be set for {here}")]
    ClusterWide { path: String, here: String },
    #[error("a set with `_type`, which kdeploy reads as an override: write it in the cluster file")]
    Override,
    #[error("no kdeploy option for it")]
    NoOption,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options() -> BTreeMap<String, OptionRef> {
        [
            ("kube_network_plugin", "network.plugin", "cluster", "one of"),
            ("kube_version", "kubernetes.version", "cluster", "a version like 1.33.5"),
            ("kubelet_max_pods", "kubelet.maxPods", "node", "an integer"),
            ("etcd_member_name", "etcd.memberName", "node", "null or a string"),
            ("loadbalancer_apiserver.address", "loadBalancer.externalAddress", "cluster", "a string"),
            ("loadbalancer_apiserver.port", "loadBalancer.externalPort", "cluster", "a port"),
        ]
        .into_iter()
        .map(|(k, p, s, t)| (k.to_string(), OptionRef { path: p.into(), scope: s.into(), ty: t.into() }))
        .collect()
    }

    fn inventory(dir: &Path) {
        std::fs::write(
            dir.join("inventory.ini"),
            "[kube_control_plane]\nnode1 ansible_host=1.1.1.1 ip=10.0.0.1 etcd_member_name=etcd1\n\n[etcd:children]\nkube_control_plane\n\n[kube_node]\nnode2 ansible_host=10.0.0.2 kubelet_max_pods=150 kube_version=1.30.0\n\n[bastion]\nbastion ansible_host=1.2.3.4\n",
        )
        .unwrap();
        std::fs::create_dir_all(dir.join("group_vars/k8s_cluster")).unwrap();
        std::fs::write(
            dir.join("group_vars/k8s_cluster/k8s-cluster.yml"),
            "kube_network_plugin: flannel\nkube_version: v1.33.5\ndns_domain: \"{{ cluster_name }}\"\nkube_made_up: 1\nloadbalancer_apiserver:\n  address: 10.0.0.100\n  port: 8383\n",
        )
        .unwrap();
        std::fs::write(dir.join("group_vars/kube_node.yml"), "kubelet_max_pods: 200\n").unwrap();
    }

    #[test]
    fn groups_become_roles_and_variables_settings() {
        let d = tempfile::tempdir().unwrap();
        inventory(d.path());
        let i = kubespray(d.path(), &options()).unwrap();
        let nodes: Vec<_> = i.nodes.iter().map(|n| (n.name.as_str(), n.address.as_str(), n.roles.clone())).collect();
        assert_eq!(
            nodes,
            [("node1", "10.0.0.1", vec!["control-plane", "etcd"]), ("node2", "10.0.0.2", vec!["worker"])]
        );
        let paths: Vec<(&str, &Json)> = i.settings.iter().map(|s| (s.path.as_str(), &s.value)).collect();
        assert!(paths.contains(&("network.plugin", &Json::from("flannel"))));
        assert!(paths.contains(&("kubernetes.version", &Json::from("1.33.5"))), "{paths:?}");
        assert!(paths.contains(&("loadBalancer.externalPort", &Json::from(8383))));
        assert_eq!(i.roles["worker"][0].value, Json::from(200));
        assert_eq!(i.nodes[1].settings[0].path, "kubelet.maxPods");
        assert_eq!(i.nodes[0].settings[0].path, "etcd.memberName");
        let why = |v: &str| i.skipped.iter().find(|s| s.var == v).map(|s| s.why.clone()).unwrap_or_default();
        assert!(why("dns_domain").contains("Jinja"));
        assert!(why("kube_made_up").contains("no kdeploy option"));
        assert!(why("kube_version").contains("cluster-wide"), "a node's kube_version: {:?}", i.skipped);
    }

    #[test]
    fn values_that_are_not_plain_data_are_listed() {
        let d = tempfile::tempdir().unwrap();
        inventory(d.path());
        std::fs::write(
            d.path().join("group_vars/all.yml"),
            "kubelet_max_pods: {_type: override, priority: 0, content: 300}\nkube_proxy_mode: \"a\\0b\"\n",
        )
        .unwrap();
        let i = kubespray(d.path(), &options()).unwrap();
        let why = |v: &str| i.skipped.iter().find(|s| s.var == v).map(|s| s.why.clone()).unwrap_or_default();
        assert!(why("kubelet_max_pods").contains("override"), "{:?}", i.skipped);
        assert!(why("kube_proxy_mode").contains("NUL"), "{:?}", i.skipped);
    }

    #[test]
    fn refused_settings_are_listed() {
        let d = tempfile::tempdir().unwrap();
        inventory(d.path());
        let mut i = kubespray(d.path(), &options()).unwrap();
        let n = i.settings.len();
        i.refuse(SettingAt::Cluster(0), "not a valid value");
        assert_eq!(i.settings.len(), n - 1);
        assert_eq!(i.skipped.last().unwrap().why, "not a valid value");
    }
}
