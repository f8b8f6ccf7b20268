# Phase "addons" (Kubespray role kubernetes-apps/ansible and metrics_server): on the
# first control plane, the cluster DNS manifests (CoreDNS, nodelocaldns, the DNS
# autoscaler) and optionally metrics-server, each group applied by a guarded hook, and
# checks that CoreDNS and nodelocaldns rolled out.
ctx: group:
let
  lib = import ../lib;
  dns = import ../templates/dns.nix;
  apply = import ../templates/apply.nix;
  inherit (lib) records text;
  inherit (builtins) map concatMap;
  cs = ctx.settings;
  bin = cs.paths.binDir;
  mode = cs.dns.mode;
  coredns = mode == "coredns" || mode == "coredns_dual";
  nodelocal = cs.dns.nodelocaldns.enable && mode != "none";
  autoscale = coredns && cs.dns.autoscaler.enable;
  kubectl = "${bin}/kubectl --kubeconfig=/etc/kubernetes/admin.conf";

  # An addon: name, directory, manifests { file = text; } and apply order.
  addon = name: dir: manifests: order: {
    inherit name;
    files = map (f: { path = "${dir}/${f}"; text = manifests.${f}; }) order;
  };
  addons =
    text.optional coredns (addon "coredns" "/etc/kubernetes" (dns.coredns { inherit ctx; })
      [ "coredns-sa.yml" "coredns-clusterrole.yml" "coredns-clusterrolebinding.yml" "coredns-config.yml" "coredns-deployment.yml" "coredns-svc.yml" ])
    ++ text.optional nodelocal (addon "nodelocaldns" "/etc/kubernetes" (dns.nodelocaldns { inherit ctx; })
      [ "nodelocaldns-sa.yml" "nodelocaldns-config.yml" "nodelocaldns-daemonset.yml" ])
    ++ text.optional autoscale (addon "dns-autoscaler" "/etc/kubernetes" (dns.autoscaler { inherit ctx; })
      [ "dns-autoscaler-sa.yml" "dns-autoscaler-clusterrole.yml" "dns-autoscaler-clusterrolebinding.yml" "dns-autoscaler.yml" ])
    ++ text.optional cs.addons.metricsServer.enable (addon "metrics-server" "/etc/kubernetes/addons/metrics_server"
      ((import ../templates/metrics-server.nix).manifests { inherit ctx; })
      [ "metrics-server-sa.yaml" "resource-reader.yaml" "resource-reader-clusterrolebinding.yaml" "auth-delegator.yaml"
        "auth-reader.yaml" "metrics-server-service.yaml" "metrics-server-deployment.yaml" "metrics-apiservice.yaml" ]);

  rollout = kind: name: records.check {
    name = "${name}-rolled-out";
    run = "${kubectl} -n kube-system rollout status ${kind}/${name} --timeout=10s";
    retries = 60;
    delay = 5;
  };
in
if !group.isFirstControlPlane then { }
else {
  directories = text.optional cs.addons.metricsServer.enable
    (records.directory { path = "/etc/kubernetes/addons/metrics_server"; });
  files = concatMap (a: map (f: records.file { inherit (f) path text; }) a.files) addons;
  hooks = map (a: apply.hook { inherit (a) name files; binDir = bin; }) addons;
  checks = text.optional coredns (rollout "deployment" "coredns")
    ++ text.optional nodelocal (rollout "daemonset" "nodelocaldns");
}
