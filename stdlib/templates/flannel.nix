# Flannel manifests as data: RBAC and the kube-flannel DaemonSet with its net-conf.json
# (Kubespray's cni-flannel-rbac.yml and cni-flannel.yml). The flannel CNI binary comes
# from the flannel-cni-plugin init container; bridge/portmap/host-local from the CNI
# reference plugins of the download phase.
let
  lib = import ../lib;
  inherit (lib) yaml text;
  inherit (builtins) toJSON;
in
{
  manifests = { ctx }:
    let
      s = ctx.settings;
      f = s.flannel;
      pull = s.kubernetes.imagePullPolicy;
      backend = { Type = f.backend; }
        // (if f.backend == "vxlan" then { VNI = f.vxlanVni; Port = f.vxlanPort; DirectRouting = f.directRouting; } else { });
      netConf = toJSON { Network = s.network.podCIDR; EnableIPv4 = true; Backend = backend; };
      cniConf = toJSON {
        name = "cbr0";
        cniVersion = "0.3.1";
        plugins = [
          { type = "flannel"; delegate = { hairpinMode = true; isDefaultGateway = true; }; }
          { type = "portmap"; capabilities.portMappings = true; }
        ];
      };
      meta = name: { inherit name; namespace = "kube-system"; };
      privileged = { privileged = false; capabilities.add = [ "NET_ADMIN" "NET_RAW" ]; };
    in
    {
      "cni-flannel-rbac.yml" = yaml.documents [
        { apiVersion = "v1"; kind = "ServiceAccount"; metadata = meta "flannel"; }
        {
          apiVersion = "rbac.authorization.k8s.io/v1";
          kind = "ClusterRole";
          metadata.name = "flannel";
          rules = [
            { apiGroups = [ "" ]; resources = [ "pods" ]; verbs = [ "get" ]; }
            { apiGroups = [ "" ]; resources = [ "nodes" ]; verbs = [ "get" "list" "watch" ]; }
            { apiGroups = [ "" ]; resources = [ "nodes/status" ]; verbs = [ "patch" ]; }
          ];
        }
        {
          apiVersion = "rbac.authorization.k8s.io/v1";
          kind = "ClusterRoleBinding";
          metadata.name = "flannel";
          roleRef = { apiGroup = "rbac.authorization.k8s.io"; kind = "ClusterRole"; name = "flannel"; };
          subjects = [{ kind = "ServiceAccount"; name = "flannel"; namespace = "kube-system"; }];
        }
      ];
      "cni-flannel.yml" = yaml.documents [
        {
          apiVersion = "v1";
          kind = "ConfigMap";
          metadata = meta "kube-flannel-cfg" // { labels = { tier = "node"; app = "flannel"; }; };
          data = { "cni-conf.json" = cniConf; "net-conf.json" = netConf; };
        }
        {
          apiVersion = "apps/v1";
          kind = "DaemonSet";
          metadata = meta "kube-flannel" // { labels = { tier = "node"; k8s-app = "flannel"; }; };
          spec = {
            selector.matchLabels.app = "flannel";
            template = {
              metadata.labels = { tier = "node"; app = "flannel"; };
              spec = {
                priorityClassName = "system-node-critical";
                serviceAccountName = "flannel";
                hostNetwork = true;
                nodeSelector."kubernetes.io/os" = "linux";
                tolerations = [{ operator = "Exists"; effect = "NoSchedule"; }];
                initContainers = [
                  {
                    name = "install-cni-plugin";
                    image = ctx.images.flannelCniPlugin;
                    imagePullPolicy = pull;
                    command = [ "cp" ];
                    args = [ "-f" "/flannel" "/opt/cni/bin/flannel" ];
                    volumeMounts = [{ name = "cni-plugin"; mountPath = "/opt/cni/bin"; }];
                  }
                  {
                    name = "install-cni";
                    image = ctx.images.flannel;
                    imagePullPolicy = pull;
                    command = [ "cp" ];
                    args = [ "-f" "/etc/kube-flannel/cni-conf.json" "/etc/cni/net.d/10-flannel.conflist" ];
                    volumeMounts = [
                      { name = "cni"; mountPath = "/etc/cni/net.d"; }
                      { name = "flannel-cfg"; mountPath = "/etc/kube-flannel/"; }
                    ];
                  }
                ];
                containers = [{
                  name = "kube-flannel";
                  image = ctx.images.flannel;
                  imagePullPolicy = pull;
                  command = [ "/opt/bin/flanneld" ];
                  args = [ "--ip-masq" "--kube-subnet-mgr" ] ++ text.optional (f.interface != null) "--iface=${f.interface}";
                  resources = { requests = { cpu = "150m"; memory = "64M"; }; limits = { cpu = "300m"; memory = "500M"; }; };
                  securityContext = privileged;
                  env = [
                    { name = "POD_NAME"; valueFrom.fieldRef.fieldPath = "metadata.name"; }
                    { name = "POD_NAMESPACE"; valueFrom.fieldRef.fieldPath = "metadata.namespace"; }
                    { name = "EVENT_QUEUE_DEPTH"; value = "5000"; }
                  ];
                  volumeMounts = [
                    { name = "run"; mountPath = "/run/flannel"; }
                    { name = "flannel-cfg"; mountPath = "/etc/kube-flannel/"; }
                    { name = "xtables-lock"; mountPath = "/run/xtables.lock"; }
                  ];
                }];
                volumes = [
                  { name = "run"; hostPath.path = "/run/flannel"; }
                  { name = "cni-plugin"; hostPath.path = "/opt/cni/bin"; }
                  { name = "cni"; hostPath.path = "/etc/cni/net.d"; }
                  { name = "flannel-cfg"; configMap.name = "kube-flannel-cfg"; }
                  { name = "xtables-lock"; hostPath = { path = "/run/xtables.lock"; type = "FileOrCreate"; }; }
                ];
              };
            };
          };
        }
      ];
    };
}
