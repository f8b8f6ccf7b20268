//! `kdeploy import kubespray` on an inventory in the layout of Kubespray's
//! inventory/sample (tests/import/kubespray-sample: hosts filled in,
//! variables changed): the printed cluster evaluates and keeps the
//! inventory's choices (roles, addresses, network plugin, proxy mode,
//! subnets, cluster name, version, per-group and per-host values); Jinja
//! templates and unknown variables are listed, not dropped; a value the
//! stdlib refuses is listed with its reason and the rest still evaluates;
//! the YAML inventory format gives the same nodes.

use crate::support;
use serde_json::Value;
use support::import::*;

#[test]
fn kubespray_sample_keeps_its_choices() {
    let Imported { nix, value: c, .. } = import(&sample());
    let node = |n: &str| &c["nodes"][n];
    let roles = |n: &str| node(n)["roles"].clone();
    assert_eq!(roles("cp1"), serde_json::json!(["control-plane", "etcd"]));
    assert_eq!(roles("worker3"), serde_json::json!(["worker"]));
    assert!(c["nodes"].get("jump").is_none(), "a host outside the Kubernetes groups became a node");
    assert_eq!(node("cp2")["address"], "10.20.0.12", "`ip` wins over ansible_host");
    assert_eq!(node("worker1")["address"], "10.20.0.21");

    let s = &c["settings"];
    assert_eq!(s["network"]["plugin"], "flannel");
    assert_eq!(s["kubeProxy"]["mode"], "iptables");
    assert_eq!(s["network"]["podCIDR"], "10.112.0.0/14");
    assert_eq!(s["network"]["serviceCIDR"], "10.96.0.0/16");
    assert_eq!(s["kubernetes"]["clusterName"], "prod.local");
    assert_eq!(s["kubernetes"]["version"], "1.32.9", "the leading v of kube_version is dropped");
    assert_eq!(s["paths"]["binDir"], "/opt/bin");
    assert_eq!(s["dns"]["upstreamServers"], serde_json::json!(["192.0.2.53", "192.0.2.54"]));
    assert_eq!(s["addons"]["metricsServer"]["replicas"], 2);

    let ns = |n: &str| node(n)["settings"].clone();
    assert_eq!(ns("cp3")["etcd"]["memberName"], "etcd3");
    assert_eq!(ns("worker1")["kubelet"]["maxPods"], 150, "group_vars/kube_node.yml");
    assert_eq!(ns("worker2")["kubelet"]["maxPods"], 80, "the host line wins over its group");
    assert_eq!(ns("cp1")["kubelet"]["maxPods"], 110, "control planes keep the default");
    assert_eq!(ns("worker3")["ssh"]["port"], 2222);
    assert_eq!(node("worker1")["ssh"]["user"], "ubuntu", "[all:vars] ansible_user");
    assert_eq!(node("worker1")["ssh"]["become"], "sudo", "a non-root login escalates with sudo");
    assert_eq!(
        (node("worker3")["ssh"]["user"].as_str(), node("worker3")["ssh"]["become"].as_str()),
        (Some("root"), Some("none"))
    );
    assert_eq!(ns("cp1")["containerd"]["maxContainerLogLineSize"], 32768);

    // nothing silently dropped
    for (var, why) in [
        ("dns_domain", "Jinja template"),
        ("https_proxy", "Jinja template"),
        ("kube_config_dir", "no kdeploy option"),
        ("helm_enabled", "no kdeploy option"),
        ("ntp_enabled", "no kdeploy option"),
        ("access_ip", "address"),
    ] {
        let line = nix
            .lines()
            .find(|l| l.starts_with(&format!("#   {var} = ")))
            .unwrap_or_else(|| panic!("{var} not listed:\n{nix}"));
        assert!(line.contains(why), "{line}");
    }
    // every setting says where it came from
    assert!(
        nix.contains("network.plugin = \"flannel\"; # kube_network_plugin (group_vars/k8s_cluster/k8s-cluster.yml)"),
        "{nix}"
    );
}

#[test]
fn a_value_the_stdlib_refuses_is_listed_and_the_rest_evaluates() {
    let dir = tempfile::tempdir().unwrap();
    let inv = dir.path().join("inv");
    copy_dir(&sample(), &inv);
    let f = inv.join("group_vars/k8s_cluster/k8s-cluster.yml");
    let t = std::fs::read_to_string(&f).unwrap().replace("kube_proxy_mode: iptables", "kube_proxy_mode: userspace");
    std::fs::write(&f, t).unwrap();
    let Imported { nix, value: c, .. } = import(&inv);
    let line = nix.lines().find(|l| l.starts_with("#   kube_proxy_mode = ")).unwrap_or_else(|| panic!("{nix}"));
    assert!(line.contains("\"userspace\"") && line.contains("unknown value"), "{line}");
    assert!(!line.contains("kubespray-import.nix"), "the reason names a temporary file: {line}");
    assert_eq!(c["settings"]["kubeProxy"]["mode"], "ipvs", "the default stays");
    assert_eq!(c["settings"]["network"]["plugin"], "flannel", "the other settings stay");
}

#[test]
fn yaml_inventory_gives_the_same_nodes() {
    let dir = tempfile::tempdir().unwrap();
    let inv = dir.path().join("inv");
    copy_dir(&sample(), &inv);
    std::fs::remove_file(inv.join("inventory.ini")).unwrap();
    std::fs::write(
        inv.join("hosts.yaml"),
        "all:
  vars: {ansible_user: ubuntu}
  hosts:
    cp1: {ansible_host: 203.0.113.11, ip: 10.20.0.11, etcd_member_name: etcd1}
    cp2: {ansible_host: 203.0.113.12, ip: 10.20.0.12, etcd_member_name: etcd2}
    cp3: {ansible_host: 203.0.113.13, ip: 10.20.0.13, etcd_member_name: etcd3}
    worker1: {ansible_host: 10.20.0.21}
    worker2: {ansible_host: 10.20.0.22, kubelet_max_pods: 80}
    worker3: {ansible_host: 10.20.0.23, ansible_port: 2222, access_ip: 10.20.0.23, ansible_user: root, ansible_become: false}
  children:
    kube_control_plane: {hosts: {cp1: , cp2: , cp3: }}
    etcd: {children: {kube_control_plane: }}
    kube_node: {hosts: {worker1: , worker2: , worker3: }}
    k8s_cluster: {children: {kube_control_plane: , kube_node: }}
",
    )
    .unwrap();
    let from_yaml = import(&inv).value;
    let from_ini = import(&sample()).value;
    let shape = |c: &Value| -> Vec<(String, Value, Value, Value)> {
        c["nodes"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(n, v)| (n.clone(), v["address"].clone(), v["roles"].clone(), v["settings"].clone()))
            .collect()
    };
    assert_eq!(shape(&from_yaml), shape(&from_ini));
}

#[test]
fn no_inventory_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let out = kdeploy(&["import", "kubespray", dir.path().to_str().unwrap()], dir.path());
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no inventory.ini"), "{}", text(&out));
}
