# Calico (Kubernetes datastore) manifests, as data rendered to YAML: the CNI config map,
# RBAC for calico-node, the CNI plugin and kube-controllers, the calico-node DaemonSet
# (install-cni init container writes /etc/cni/net.d/10-calico.conflist on each node) and
# the calico-kube-controllers Deployment. The default IPv4 pool is created by calico-node
# from CALICO_IPV4POOL_* on first start. The CRDs come as a pinned artifact.
let
  lib = import ../lib;
  inherit (lib) yaml;
  inherit (builtins) toJSON toString;

  rule = apiGroups: resources: verbs: { inherit apiGroups resources verbs; };
  calicoCRD = "crd.projectcalico.org";
  env = name: value: { inherit name; value = toString value; };
  fromConfig = name: key: { inherit name; valueFrom.configMapKeyRef = { name = "calico-config"; inherit key; }; };
  fromField = name: path: { inherit name; valueFrom.fieldRef.fieldPath = path; };
  hostPath = name: path: extra: { inherit name; hostPath = { inherit path; } // extra; };
  mount = name: mountPath: extra: { inherit name mountPath; } // extra;
  meta = name: { inherit name; namespace = "kube-system"; };
  sa = name: { apiVersion = "v1"; kind = "ServiceAccount"; metadata = meta name; };
  clusterRole = name: rules: { apiVersion = "rbac.authorization.k8s.io/v1"; kind = "ClusterRole"; metadata.name = name; inherit rules; };
  binding = name: {
    apiVersion = "rbac.authorization.k8s.io/v1";
    kind = "ClusterRoleBinding";
    metadata.name = name;
    roleRef = { apiGroup = "rbac.authorization.k8s.io"; kind = "ClusterRole"; inherit name; };
    subjects = [{ kind = "ServiceAccount"; inherit name; namespace = "kube-system"; }];
  };
in
{
  # Returns { "<file name>" = yaml text; } for /etc/kubernetes/<file name>.
  manifests = { ctx }:
    let
      s = ctx.settings;
      c = s.calico;
      pull = s.kubernetes.imagePullPolicy;
      mtu = if c.mtu == null then 0 else c.mtu;
      bgp = c.backend == "bird";
      cniConfig = toJSON {
        name = "k8s-pod-network";
        cniVersion = "0.3.1";
        plugins = [
          {
            type = "calico";
            log_level = "info";
            log_file_path = "/var/log/calico/cni/cni.log";
            datastore_type = "kubernetes";
            nodename = "__KUBERNETES_NODE_NAME__";
            mtu = "__CNI_MTU__";
            ipam = { type = "calico-ipam"; assign_ipv4 = "true"; ipv4_pools = [ s.network.podCIDR ]; };
            policy.type = "k8s";
            kubernetes.kubeconfig = "__KUBECONFIG_FILEPATH__";
          }
          { type = "portmap"; snat = true; capabilities.portMappings = true; }
          { type = "bandwidth"; capabilities.bandwidth = true; }
        ];
      };
      # install-cni substitutes __CNI_MTU__ textually; it must end up a number.
      cniConfigText = builtins.replaceStrings [ "\"__CNI_MTU__\"" ] [ "__CNI_MTU__" ] cniConfig;

      config = {
        apiVersion = "v1";
        kind = "ConfigMap";
        metadata = meta "calico-config";
        data = {
          calico_backend = c.backend;
          cni_network_config = cniConfigText;
          typha_service_name = "none";
          veth_mtu = toString mtu;
        };
      };

      nodeRules = [
        (rule [ "" ] [ "pods" "nodes" "namespaces" "configmaps" ] [ "get" ])
        (rule [ "discovery.k8s.io" ] [ "endpointslices" ] [ "watch" "list" ])
        (rule [ "" ] [ "endpoints" "services" ] [ "watch" "list" "get" ])
        (rule [ "" ] [ "nodes/status" ] [ "patch" "update" ])
        (rule [ "networking.k8s.io" ] [ "networkpolicies" ] [ "watch" "list" ])
        (rule [ "policy.networking.k8s.io" ] [ "adminnetworkpolicies" "baselineadminnetworkpolicies" ] [ "watch" "list" ])
        (rule [ "" ] [ "pods" "namespaces" "serviceaccounts" ] [ "list" "watch" ])
        (rule [ "" ] [ "pods/status" ] [ "patch" ])
        (rule [ calicoCRD ] [
          "globalfelixconfigs" "felixconfigurations" "bgppeers" "bgpfilters" "globalbgpconfigs" "bgpconfigurations"
          "ippools" "ipreservations" "ipamblocks" "globalnetworkpolicies" "stagedglobalnetworkpolicies"
          "networkpolicies" "stagednetworkpolicies" "stagedkubernetesnetworkpolicies" "globalnetworksets"
          "networksets" "clusterinformations" "hostendpoints" "blockaffinities" "caliconodestatuses" "tiers"
        ] [ "get" "list" "watch" ])
        (rule [ calicoCRD ] [ "tiers" ] [ "create" ])
        (rule [ calicoCRD ] [ "ippools" "felixconfigurations" "clusterinformations" ] [ "create" "update" ])
        (rule [ calicoCRD ] [ "caliconodestatuses" ] [ "update" ])
        (rule [ "" ] [ "nodes" ] [ "get" "list" "watch" ])
        (rule [ calicoCRD ] [ "bgpconfigurations" "bgppeers" ] [ "create" "update" ])
        (rule [ calicoCRD ] [ "blockaffinities" "ipamblocks" "ipamhandles" ] [ "get" "list" "create" "update" "delete" ])
        (rule [ calicoCRD ] [ "ipamconfigs" ] [ "get" "create" ])
        (rule [ calicoCRD ] [ "blockaffinities" ] [ "watch" ])
        (rule [ "apps" ] [ "daemonsets" ] [ "get" ])
        ((rule [ "" ] [ "serviceaccounts/token" ] [ "create" ]) // { resourceNames = [ "calico-cni-plugin" ]; })
      ];
      cniRules = [
        (rule [ "" ] [ "pods" "nodes" "namespaces" ] [ "get" ])
        (rule [ "" ] [ "pods/status" ] [ "patch" ])
        (rule [ "" ] [ "nodes/status" ] [ "update" ])
        (rule [ calicoCRD ] [ "blockaffinities" "ipamblocks" "ipamhandles" "clusterinformations" "ippools" "ipreservations" "ipamconfigs" ]
          [ "get" "list" "create" "update" "delete" ])
      ];
      controllersRules = [
        (rule [ "" ] [ "nodes" ] [ "watch" "list" "get" ])
        (rule [ "" ] [ "pods" ] [ "watch" "list" "get" ])
        (rule [ calicoCRD ] [ "ipreservations" ] [ "list" ])
        (rule [ calicoCRD ] [ "ippools" ] [ "list" "watch" ])
        (rule [ calicoCRD ] [ "blockaffinities" "ipamblocks" "ipamhandles" "ipamconfigs" "tiers" ] [ "get" "list" "create" "update" "delete" "watch" ])
        (rule [ calicoCRD ] [ "hostendpoints" ] [ "get" "list" "create" "update" "delete" "watch" ])
        (rule [ calicoCRD ] [ "clusterinformations" "kubecontrollersconfigurations" ] [ "get" "list" "create" "update" "watch" ])
        (rule [ "" ] [ "services" "services/status" ] [ "get" "list" "update" "watch" ])
        (rule [ "" ] [ "namespaces" ] [ "get" "list" "watch" ])
      ];

      privileged = { privileged = true; };
      node = {
        apiVersion = "apps/v1";
        kind = "DaemonSet";
        metadata = meta "calico-node" // { labels.k8s-app = "calico-node"; };
        spec = {
          selector.matchLabels.k8s-app = "calico-node";
          updateStrategy = { type = "RollingUpdate"; rollingUpdate.maxUnavailable = 1; };
          template = {
            metadata.labels.k8s-app = "calico-node";
            spec = {
              nodeSelector."kubernetes.io/os" = "linux";
              priorityClassName = "system-node-critical";
              hostNetwork = true;
              serviceAccountName = "calico-node";
              terminationGracePeriodSeconds = 0;
              tolerations = [
                { effect = "NoSchedule"; operator = "Exists"; }
                { key = "CriticalAddonsOnly"; operator = "Exists"; }
                { effect = "NoExecute"; operator = "Exists"; }
              ];
              initContainers = [
                {
                  name = "install-cni";
                  image = ctx.images.calicoCni;
                  imagePullPolicy = pull;
                  command = [ "/opt/cni/bin/install" ];
                  env = [
                    (fromConfig "CNI_NETWORK_CONFIG" "cni_network_config")
                    (env "CNI_CONF_NAME" "10-calico.conflist")
                    (fromConfig "CNI_MTU" "veth_mtu")
                    (env "SLEEP" "false")
                    (fromField "KUBERNETES_NODE_NAME" "spec.nodeName")
                  ];
                  volumeMounts = [ (mount "cni-net-dir" "/host/etc/cni/net.d" { }) (mount "cni-bin-dir" "/host/opt/cni/bin" { }) ];
                  securityContext = privileged;
                }
                {
                  name = "mount-bpffs";
                  image = ctx.images.calicoNode;
                  imagePullPolicy = pull;
                  command = [ "calico-node" "-init" "-best-effort" ];
                  volumeMounts = [
                    (mount "sys-fs" "/sys/fs" { mountPropagation = "Bidirectional"; })
                    (mount "var-run-calico" "/var/run/calico" { mountPropagation = "Bidirectional"; })
                    (mount "nodeproc" "/nodeproc" { readOnly = true; })
                  ];
                  securityContext = privileged;
                }
              ];
              containers = [{
                name = "calico-node";
                image = ctx.images.calicoNode;
                imagePullPolicy = pull;
                env = [
                  (env "DATASTORE_TYPE" "kubernetes")
                  (env "WAIT_FOR_DATASTORE" "true")
                  (fromField "NODENAME" "spec.nodeName")
                  (fromConfig "CALICO_NETWORKING_BACKEND" "calico_backend")
                  (env "CLUSTER_TYPE" "k8s,bgp")
                  (fromField "NODEIP" "status.hostIP")
                  (env "IP" "autodetect")
                  (env "IP_AUTODETECTION_METHOD" (if c.ipAutodetectionMethod == null then "can-reach=$(NODEIP)" else c.ipAutodetectionMethod))
                  (env "CALICO_IPV4POOL_CIDR" s.network.podCIDR)
                  (env "CALICO_IPV4POOL_BLOCK_SIZE" c.poolBlockSize)
                  (env "CALICO_IPV4POOL_IPIP" c.ipipMode)
                  (env "CALICO_IPV4POOL_VXLAN" c.vxlanMode)
                  (env "CALICO_IPV4POOL_NAT_OUTGOING" (lib.text.boolStr c.natOutgoing))
                  (env "CALICO_DISABLE_FILE_LOGGING" "true")
                  (env "CALICO_MANAGE_CNI" "true")
                  (env "FELIX_DEFAULTENDPOINTTOHOSTACTION" "RETURN")
                  (env "FELIX_HEALTHENABLED" "true")
                  (env "FELIX_HEALTHHOST" "localhost")
                  (env "FELIX_IPV6SUPPORT" "false")
                  (env "FELIX_LOGSEVERITYSCREEN" c.logLevel)
                  (env "FELIX_IPTABLESBACKEND" c.iptablesBackend)
                  (env "FELIX_VXLANVNI" c.vxlanVni)
                  (env "FELIX_VXLANPORT" c.vxlanPort)
                  (fromConfig "FELIX_VXLANMTU" "veth_mtu")
                  (fromConfig "FELIX_IPINIPMTU" "veth_mtu")
                  (env "FELIX_KUBENODEPORTRANGES" (builtins.replaceStrings [ "-" ] [ ":" ] s.apiserver.nodePortRange))
                  (env "FELIX_USAGEREPORTINGENABLED" "false")
                ];
                securityContext = privileged;
                resources = {
                  limits.memory = c.nodeMemoryLimit;
                  requests = { cpu = c.nodeCpuRequests; memory = "64M"; };
                };
                lifecycle.preStop.exec.command = [ "/bin/calico-node" "-shutdown" ];
                livenessProbe = {
                  exec.command = [ "/bin/calico-node" "-felix-live" ] ++ (if bgp then [ "-bird-live" ] else [ ]);
                  periodSeconds = 10; initialDelaySeconds = 10; failureThreshold = 6; timeoutSeconds = 10;
                };
                readinessProbe = {
                  exec.command = [ "/bin/calico-node" "-felix-ready" ] ++ (if bgp then [ "-bird-ready" ] else [ ]);
                  periodSeconds = 10; timeoutSeconds = 10;
                };
                volumeMounts = [
                  (mount "lib-modules" "/lib/modules" { readOnly = true; })
                  (mount "xtables-lock" "/run/xtables.lock" { })
                  (mount "var-run-calico" "/var/run/calico" { })
                  (mount "var-lib-calico" "/var/lib/calico" { })
                  (mount "cni-net-dir" "/host/etc/cni/net.d" { })
                  (mount "cni-log-dir" "/var/log/calico/cni" { readOnly = true; })
                  (mount "policysync" "/var/run/nodeagent" { })
                  (mount "bpffs" "/sys/fs/bpf" { })
                ];
              }];
              volumes = [
                (hostPath "lib-modules" "/lib/modules" { })
                (hostPath "var-run-calico" "/var/run/calico" { type = "DirectoryOrCreate"; })
                (hostPath "var-lib-calico" "/var/lib/calico" { type = "DirectoryOrCreate"; })
                (hostPath "xtables-lock" "/run/xtables.lock" { type = "FileOrCreate"; })
                (hostPath "sys-fs" "/sys/fs/" { type = "DirectoryOrCreate"; })
                (hostPath "bpffs" "/sys/fs/bpf" { type = "Directory"; })
                (hostPath "nodeproc" "/proc" { })
                (hostPath "cni-bin-dir" "/opt/cni/bin" { type = "DirectoryOrCreate"; })
                (hostPath "cni-net-dir" "/etc/cni/net.d" { })
                (hostPath "cni-log-dir" "/var/log/calico/cni" { })
                (hostPath "policysync" "/var/run/nodeagent" { type = "DirectoryOrCreate"; })
              ];
            };
          };
        };
      };

      controllers = {
        apiVersion = "apps/v1";
        kind = "Deployment";
        metadata = meta "calico-kube-controllers" // { labels.k8s-app = "calico-kube-controllers"; };
        spec = {
          replicas = 1;
          strategy.type = "Recreate";
          selector.matchLabels.k8s-app = "calico-kube-controllers";
          template = {
            metadata.labels.k8s-app = "calico-kube-controllers";
            spec = {
              nodeSelector."kubernetes.io/os" = "linux";
              serviceAccountName = "calico-kube-controllers";
              priorityClassName = "system-cluster-critical";
              tolerations = [
                { key = "CriticalAddonsOnly"; operator = "Exists"; }
                { key = "node-role.kubernetes.io/control-plane"; effect = "NoSchedule"; }
              ];
              containers = [{
                name = "calico-kube-controllers";
                image = ctx.images.calicoKubeControllers;
                imagePullPolicy = pull;
                env = [ (env "ENABLED_CONTROLLERS" "node") (env "DATASTORE_TYPE" "kubernetes") ];
                livenessProbe = { exec.command = [ "/usr/bin/check-status" "-l" ]; periodSeconds = 10; initialDelaySeconds = 10; failureThreshold = 6; };
                readinessProbe = { exec.command = [ "/usr/bin/check-status" "-r" ]; periodSeconds = 10; };
                securityContext.runAsNonRoot = true;
              }];
            };
          };
        };
      };
    in
    {
      "calico-config.yml" = yaml.toYAML config;
      "calico-node-sa.yml" = yaml.documents [ (sa "calico-node") (sa "calico-cni-plugin") ];
      "calico-cr.yml" = yaml.documents [ (clusterRole "calico-node" nodeRules) (clusterRole "calico-cni-plugin" cniRules) ];
      "calico-crb.yml" = yaml.documents [ (binding "calico-node") (binding "calico-cni-plugin") ];
      "calico-node.yml" = yaml.toYAML node;
      "calico-kube-controllers.yml" = yaml.documents [
        (sa "calico-kube-controllers")
        (clusterRole "calico-kube-controllers" controllersRules)
        (binding "calico-kube-controllers")
        controllers
      ];
    };
}
