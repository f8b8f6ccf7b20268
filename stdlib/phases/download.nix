# Phase "download" (Kubespray role download): places the binaries later phases run
# (etcd, etcdctl, kubelet, kubeadm, kubectl, CNI plugins, calicoctl) as artifacts -
# pinned URL + sha256, or local files of the deployer - and pre-pulls the container
# images this node will run (crictl pull, guarded by crictl inspecti). The container
# runtime's own binaries come with the container-runtime phase, as in Kubespray.
# What only generate-only phases (kdeploy.generateOnly) need is left out.
ctx: group:
let
  lib = import ../lib;
  artifacts = import ../artifacts.nix;
  inherit (lib) records text;
  inherit (builtins) concatMap filter map elem replaceStrings;
  s = group.settings;
  cs = ctx.settings;
  bin = cs.paths.binDir;
  plugin = cs.network.plugin;
  hostEtcd = cs.etcd.deploymentType == "host";
  versions = ctx.versions;

  components =
    text.optionals (group.isEtcd && hostEtcd) [ "etcd" "etcdctl" ]
    ++ text.optionals group.isK8s [ "kubelet" "kubeadm" "kubectl" ]
    ++ text.optional (group.isK8s && plugin != "none") "cni-plugins"
    ++ text.optional (group.isControlPlane && plugin == "calico") "calicoctl";
  wanted = filter (c: ctx.active (artifacts.consumerOf c)) components;

  # { image; consumer; } for this node.
  images = text.optionals group.isK8s (
    [ { image = ctx.images.pause; consumer = "kubelet"; } ]
    ++ text.optional (!cs.kubeProxy.remove) { image = ctx.images.kubeProxy; consumer = "control-plane"; }
    ++ text.optionals group.isControlPlane (map (i: { image = i; consumer = "control-plane"; }) ctx.images.controlPlane)
    ++ text.optional (!group.isControlPlane && ctx.api.localLB)
      { image = if cs.loadBalancer.type == "nginx" then ctx.images.nginx else ctx.images.haproxy; consumer = "kubelet"; }
    ++ text.optionals (plugin == "calico") ([
      { image = ctx.images.calicoNode; consumer = "cni"; }
      { image = ctx.images.calicoCni; consumer = "cni"; }
    ] ++ text.optional group.isControlPlane { image = ctx.images.calicoKubeControllers; consumer = "cni"; })
    ++ text.optionals (plugin == "flannel") [
      { image = ctx.images.flannel; consumer = "cni"; }
      { image = ctx.images.flannelCniPlugin; consumer = "cni"; }
    ]
    ++ text.optionals (cs.dns.mode == "coredns" || cs.dns.mode == "coredns_dual") [ { image = ctx.images.coredns; consumer = "addons"; } ]
    ++ text.optional (cs.dns.nodelocaldns.enable && cs.dns.mode != "none") { image = ctx.images.nodelocaldns; consumer = "addons"; }
    ++ text.optional (cs.dns.autoscaler.enable && cs.dns.mode != "none" && cs.dns.mode != "manual") { image = ctx.images.dnsAutoscaler; consumer = "addons"; }
    ++ text.optional cs.addons.metricsServer.enable { image = ctx.images.metricsServer; consumer = "addons"; }
  );
  pulls = filter (i: ctx.active i.consumer) images;
  crictl = "${bin}/crictl";
in
{
  files = concatMap (artifacts.files s versions) wanted;
  hooks = text.optionals cs.download.prePullImages (map
    (i: records.hook {
      name = "pull-image-${replaceStrings [ "/" ":" ] [ "_" "_" ] i.image}";
      # the image is in containerd's storage, which container-runtime's reset removes
      undo.by = "containerd-reset";
      run = "${crictl} pull ${text.shQuote i.image}";
      unless = "${crictl} inspecti ${text.shQuote i.image} >/dev/null 2>&1";
    })
    pulls);
}
