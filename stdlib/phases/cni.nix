# Phase "cni" (Kubespray roles network_plugin/cni, calico, flannel): the network
# plugin's manifests on the first control plane, applied by guarded hooks (calico CRDs
# first, from a pinned artifact), a calicoctl.sh wrapper on control planes, and checks
# that each node received its CNI config (written by the plugin's DaemonSet).
ctx: group:
let
  lib = import ../lib;
  versions = import ../versions.nix;
  apply = import ../templates/apply.nix;
  inherit (lib) records text;
  inherit (builtins) attrNames map;
  cs = ctx.settings;
  bin = cs.paths.binDir;
  plugin = cs.network.plugin;
  first = group.isFirstControlPlane;

  manifests =
    if plugin == "calico" then (import ../templates/calico.nix).manifests { inherit ctx; }
    else if plugin == "flannel" then (import ../templates/flannel.nix).manifests { inherit ctx; }
    else { };
  # apply order matters: configuration and RBAC before workloads
  order = {
    calico = [ "calico-config.yml" "calico-node-sa.yml" "calico-cr.yml" "calico-crb.yml" "calico-node.yml" "calico-kube-controllers.yml" ];
    flannel = [ "cni-flannel-rbac.yml" "cni-flannel.yml" ];
  }.${plugin} or [ ];
  manifestFiles = map (n: { path = "/etc/kubernetes/${n}"; text = manifests.${n}; }) order;

  crds = records.file {
    path = "/etc/kubernetes/kdd-crds.yml";
    # one file for every architecture, as Kubespray's no_arch entry
    artifact = (import ../artifacts.nix).artifact group.settings {
      component = "calico-crds";
      version = cs.calico.version;
      name = "calico-${cs.calico.version}-crds.yaml";
      url = versions.urls.calicoCrds { github = cs.download.githubUrl; version = cs.calico.version; };
    };
  };

  confFile = { calico = "/etc/cni/net.d/10-calico.conflist"; flannel = "/etc/cni/net.d/10-flannel.conflist"; }.${plugin} or null;
  kubectl = "${bin}/kubectl --kubeconfig=/etc/kubernetes/admin.conf";
  daemonset = { calico = "calico-node"; flannel = "kube-flannel"; }.${plugin} or null;
  # a node leaving drains before its interfaces go (./leave.nix)
  leave = import ./leave.nix ctx group;
in
if !group.isK8s || plugin == "none" || plugin == "cni" then { }
else node: {
  files =
    text.optionals first (text.optional (plugin == "calico") crds
      ++ map (f: records.file { inherit (f) path text; mode = "0644"; }) manifestFiles)
    ++ text.optional (plugin == "calico" && group.isControlPlane) (records.file {
      path = "${bin}/calicoctl.sh";
      mode = "0755";
      text = text.lines [
        "#!/bin/sh"
        "# calicoctl against the Kubernetes datastore (managed by kdeploy)."
        "DATASTORE_TYPE=kubernetes KUBECONFIG=/etc/kubernetes/admin.conf exec ${bin}/calicoctl \"$@\""
      ];
    });

  # Reset (Kubespray reset.yml): the node leaves first, then the plugin's interfaces,
  # its and kube-proxy's iptables rules and IPVS services (other rules stay), and the
  # CNI state and config.
  hooks = leave.hooks node ++ [
    (records.hook {
      name = "cni-reset";
      when = "reset";
      run = text.lines [
        "for i in cni0 flannel.1 flannel-v6.1 tunl0 vxlan.calico vxlan-v6.calico kube-ipvs0 nodelocaldns; do"
        "  if ip link show \"$i\" >/dev/null 2>&1; then ip link delete \"$i\" || exit 1; fi"
        "done"
        "for i in $(ip -o link show | awk -F': ' '$2 ~ /^cali/ { sub(/@.*/, \"\", $2); print $2 }'); do ip link delete \"$i\"; done"
        "for t in iptables ip6tables; do"
        "  if command -v \"$t-save\" >/dev/null 2>&1; then"
        "    \"$t-save\" | grep -v -E -e 'KUBE-|cali-|cali:|FLANNEL|flannel' | \"$t-restore\" || exit 1"
        "  fi"
        "done"
        "if command -v ipvsadm >/dev/null 2>&1; then ipvsadm --clear; fi"
        "rm -rf /etc/cni/net.d /var/lib/cni /var/lib/calico /run/calico /run/flannel"
      ];
    })
  ] ++ text.optionals first (
    text.optional (plugin == "calico") (apply.hook {
      name = "calico-crds";
      files = [ { path = crds.path; } ];
      extraHash = crds.source.artifact.sha256;
      binDir = bin;
      serverSide = true;
    })
    ++ [ (apply.hook { name = "cni-${plugin}"; files = manifestFiles; binDir = bin; }) ]
  );

  checks =
    [
      (records.check {
        name = "cni-config-present";
        run = "test -s ${confFile}";
        retries = 60;
        delay = 5;
      })
    ]
    ++ text.optional first (records.check {
      name = "${daemonset}-rolled-out";
      run = "${kubectl} -n kube-system rollout status daemonset/${daemonset} --timeout=10s";
      retries = 60;
      delay = 5;
    });
}
