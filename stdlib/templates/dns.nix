# Cluster DNS manifests as data (Kubespray's kubernetes-apps/ansible templates):
# CoreDNS (RBAC, Corefile, Deployment, Service at the third service address, a second
# Service for coredns_dual), nodelocaldns (Corefile, DaemonSet on the link-local address)
# and the cluster-proportional DNS autoscaler. Returns { "<file>" = yaml; }.
let
  lib = import ../lib;
  inherit (lib) yaml text;
  inherit (builtins) concatStringsSep toJSON;

  meta = name: labels: { inherit name labels; namespace = "kube-system"; };
  sa = name: { apiVersion = "v1"; kind = "ServiceAccount"; metadata = meta name { "addonmanager.kubernetes.io/mode" = "Reconcile"; }; };
  clusterRole = name: rules: { apiVersion = "rbac.authorization.k8s.io/v1"; kind = "ClusterRole"; metadata.name = name; inherit rules; };
  binding = name: saName: {
    apiVersion = "rbac.authorization.k8s.io/v1";
    kind = "ClusterRoleBinding";
    metadata.name = name;
    roleRef = { apiGroup = "rbac.authorization.k8s.io"; kind = "ClusterRole"; inherit name; };
    subjects = [{ kind = "ServiceAccount"; name = saName; namespace = "kube-system"; }];
  };
  port = name: p: protocol: { inherit name protocol; containerPort = p; };
in
{
  coredns = { ctx }:
    let
      s = ctx.settings;
      d = s.dns.domain;
      upstream = if s.dns.upstreamServers == [ ] then "/etc/resolv.conf" else concatStringsSep " " s.dns.upstreamServers;
      corefile = text.lines [
        ".:53 {"
        "    errors"
        "    health {"
        "        lameduck 5s"
        "    }"
        "    ready"
        "    kubernetes ${d} in-addr.arpa ip6.arpa {"
        "        pods insecure"
        "        fallthrough in-addr.arpa ip6.arpa"
        "    }"
        "    prometheus :9153"
        "    forward . ${upstream} {"
        "        prefer_udp"
        "        max_concurrent 1000"
        "    }"
        "    cache 30"
        "    loop"
        "    reload"
        "    loadbalance"
        "}"
      ];
      labels = { k8s-app = "kube-dns"; };
      service = name: ip: {
        apiVersion = "v1";
        kind = "Service";
        metadata = meta name (labels // { "kubernetes.io/name" = "coredns"; "addonmanager.kubernetes.io/mode" = "Reconcile"; })
          // { annotations = { "prometheus.io/port" = "9153"; "prometheus.io/scrape" = "true"; }; };
        spec = {
          selector = labels;
          clusterIP = ip;
          ports = [
            { name = "dns"; port = 53; protocol = "UDP"; }
            { name = "dns-tcp"; port = 53; protocol = "TCP"; }
            { name = "metrics"; port = 9153; protocol = "TCP"; }
          ];
        };
      };
    in
    {
      "coredns-sa.yml" = yaml.toYAML (sa "coredns");
      "coredns-clusterrole.yml" = yaml.toYAML (clusterRole "system:coredns" [
        { apiGroups = [ "" ]; resources = [ "endpoints" "services" "pods" "namespaces" ]; verbs = [ "list" "watch" ]; }
        { apiGroups = [ "discovery.k8s.io" ]; resources = [ "endpointslices" ]; verbs = [ "list" "watch" ]; }
        { apiGroups = [ "" ]; resources = [ "nodes" ]; verbs = [ "get" ]; }
      ]);
      "coredns-clusterrolebinding.yml" = yaml.toYAML (binding "system:coredns" "coredns");
      "coredns-config.yml" = yaml.toYAML {
        apiVersion = "v1";
        kind = "ConfigMap";
        metadata = meta "coredns" { "addonmanager.kubernetes.io/mode" = "EnsureExists"; };
        data.Corefile = corefile;
      };
      "coredns-deployment.yml" = yaml.toYAML {
        apiVersion = "apps/v1";
        kind = "Deployment";
        metadata = meta "coredns" (labels // { "kubernetes.io/name" = "coredns"; });
        spec = (if s.dns.autoscaler.enable then { } else { replicas = s.dns.coredns.replicas; }) // {
          strategy = { type = "RollingUpdate"; rollingUpdate = { maxUnavailable = 0; maxSurge = "10%"; }; };
          selector.matchLabels = labels;
          template = {
            metadata.labels = labels;
            spec = {
              priorityClassName = "system-cluster-critical";
              serviceAccountName = "coredns";
              nodeSelector."kubernetes.io/os" = "linux";
              tolerations = [
                { key = "node-role.kubernetes.io/control-plane"; effect = "NoSchedule"; }
                { key = "CriticalAddonsOnly"; operator = "Exists"; }
              ];
              affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution = [{
                weight = 100;
                podAffinityTerm = {
                  labelSelector.matchExpressions = [{ key = "k8s-app"; operator = "In"; values = [ "kube-dns" ]; }];
                  topologyKey = "kubernetes.io/hostname";
                };
              }];
              containers = [{
                name = "coredns";
                image = ctx.images.coredns;
                imagePullPolicy = s.kubernetes.imagePullPolicy;
                args = [ "-conf" "/etc/coredns/Corefile" ];
                resources = { limits.memory = s.dns.coredns.memoryLimit; requests = { cpu = "100m"; memory = "70Mi"; }; };
                volumeMounts = [{ name = "config-volume"; mountPath = "/etc/coredns"; }];
                ports = [ (port "dns" 53 "UDP") (port "dns-tcp" 53 "TCP") (port "metrics" 9153 "TCP") ];
                securityContext = {
                  allowPrivilegeEscalation = false;
                  capabilities = { add = [ "NET_BIND_SERVICE" ]; drop = [ "ALL" ]; };
                  readOnlyRootFilesystem = true;
                };
                livenessProbe = { httpGet = { path = "/health"; port = 8080; scheme = "HTTP"; }; timeoutSeconds = 5; successThreshold = 1; failureThreshold = 10; };
                readinessProbe = { httpGet = { path = "/ready"; port = 8181; scheme = "HTTP"; }; timeoutSeconds = 5; successThreshold = 1; failureThreshold = 10; };
              }];
              dnsPolicy = "Default";
              volumes = [{ name = "config-volume"; configMap = { name = "coredns"; items = [{ key = "Corefile"; path = "Corefile"; }]; }; }];
            };
          };
        };
      };
      "coredns-svc.yml" = yaml.documents ([ (service "coredns" ctx.net.dnsIP) ]
        ++ text.optional (s.dns.mode == "coredns_dual") (service "coredns-second" ctx.net.dnsIP2));
    };

  nodelocaldns = { ctx }:
    let
      s = ctx.settings;
      ip = s.dns.nodelocaldns.ip;
      forward = concatStringsSep " " (if s.dns.mode == "coredns_dual" then [ ctx.net.dnsIP ctx.net.dnsIP2 ] else if s.dns.mode == "manual" then [ s.dns.manualServer ] else [ ctx.net.dnsIP ]);
      upstream = if s.dns.upstreamServers == [ ] then "/etc/resolv.conf" else concatStringsSep " " s.dns.upstreamServers;
      zone = name: target: extra: [
        "${name}:53 {"
        "    errors"
      ] ++ extra ++ [
        "    reload"
        "    loop"
        "    bind ${ip}"
        "    forward . ${target} {"
        "        force_tcp"
        "    }"
        "    prometheus :9253"
      ];
      corefile = text.lines (
        zone s.dns.domain forward [ "    cache {" "        success 9984 30" "        denial 9984 5" "    }" ]
        ++ [ "    health ${ip}:${toString s.dns.nodelocaldns.healthPort}" "}" ]
        ++ zone "in-addr.arpa" forward [ "    cache 30" ] ++ [ "}" ]
        ++ zone "ip6.arpa" forward [ "    cache 30" ] ++ [ "}" ]
        ++ [
          ".:53 {"
          "    errors"
          "    cache 30"
          "    reload"
          "    loop"
          "    bind ${ip}"
          "    forward . ${upstream}"
          "    prometheus :9253"
          "}"
        ]);
      labels = { k8s-app = "nodelocaldns"; };
    in
    {
      "nodelocaldns-sa.yml" = yaml.toYAML (sa "nodelocaldns");
      "nodelocaldns-config.yml" = yaml.toYAML {
        apiVersion = "v1";
        kind = "ConfigMap";
        metadata = meta "nodelocaldns" { "addonmanager.kubernetes.io/mode" = "EnsureExists"; };
        data.Corefile = corefile;
      };
      "nodelocaldns-daemonset.yml" = yaml.toYAML {
        apiVersion = "apps/v1";
        kind = "DaemonSet";
        metadata = meta "nodelocaldns" labels;
        spec = {
          selector.matchLabels = labels;
          template = {
            metadata = {
              inherit labels;
              annotations = { "prometheus.io/scrape" = "true"; "prometheus.io/port" = "9253"; };
            };
            spec = {
              nodeSelector."kubernetes.io/os" = "linux";
              priorityClassName = "system-cluster-critical";
              serviceAccountName = "nodelocaldns";
              hostNetwork = true;
              dnsPolicy = "Default";
              tolerations = [{ effect = "NoSchedule"; operator = "Exists"; } { effect = "NoExecute"; operator = "Exists"; }];
              terminationGracePeriodSeconds = 0;
              containers = [{
                name = "node-cache";
                image = ctx.images.nodelocaldns;
                imagePullPolicy = s.kubernetes.imagePullPolicy;
                resources = { limits.memory = "200Mi"; requests = { cpu = "100m"; memory = "70Mi"; }; };
                args = [ "-localip" ip "-conf" "/etc/coredns/Corefile" "-upstreamsvc" "coredns" ];
                securityContext.privileged = true;
                ports = [ (port "dns" 53 "UDP") (port "dns-tcp" 53 "TCP") (port "metrics" 9253 "TCP") ];
                livenessProbe = { httpGet = { host = ip; path = "/health"; port = s.dns.nodelocaldns.healthPort; scheme = "HTTP"; }; timeoutSeconds = 5; successThreshold = 1; failureThreshold = 10; };
                readinessProbe = { httpGet = { host = ip; path = "/health"; port = s.dns.nodelocaldns.healthPort; scheme = "HTTP"; }; timeoutSeconds = 5; successThreshold = 1; failureThreshold = 10; };
                volumeMounts = [
                  { name = "config-volume"; mountPath = "/etc/coredns"; }
                  { name = "xtables-lock"; mountPath = "/run/xtables.lock"; }
                ];
              }];
              volumes = [
                { name = "config-volume"; configMap = { name = "nodelocaldns"; items = [{ key = "Corefile"; path = "Corefile.base"; }]; }; }
                { name = "xtables-lock"; hostPath = { path = "/run/xtables.lock"; type = "FileOrCreate"; }; }
              ];
            };
          };
        };
      };
    };

  autoscaler = { ctx }:
    let
      s = ctx.settings;
      params = toJSON {
        linear = {
          preventSinglePointFailure = builtins.length ctx.k8sNodes > 1;
          coresPerReplica = 256;
          nodesPerReplica = 16;
          min = if builtins.length ctx.k8sNodes < 2 then 1 else 2;
        };
      };
      labels = { k8s-app = "dns-autoscaler"; };
    in
    {
      "dns-autoscaler-sa.yml" = yaml.toYAML (sa "dns-autoscaler");
      "dns-autoscaler-clusterrole.yml" = yaml.toYAML (clusterRole "cluster-proportional-autoscaler" [
        { apiGroups = [ "" ]; resources = [ "nodes" ]; verbs = [ "list" "watch" ]; }
        { apiGroups = [ "" ]; resources = [ "replicationcontrollers/scale" ]; verbs = [ "get" "update" ]; }
        { apiGroups = [ "extensions" "apps" ]; resources = [ "deployments/scale" "replicasets/scale" ]; verbs = [ "get" "update" ]; }
        { apiGroups = [ "" ]; resources = [ "configmaps" ]; verbs = [ "get" "create" ]; }
      ]);
      "dns-autoscaler-clusterrolebinding.yml" = yaml.toYAML (binding "cluster-proportional-autoscaler" "dns-autoscaler");
      "dns-autoscaler.yml" = yaml.toYAML {
        apiVersion = "apps/v1";
        kind = "Deployment";
        metadata = meta "dns-autoscaler" labels;
        spec = {
          selector.matchLabels = labels;
          template = {
            metadata.labels = labels;
            spec = {
              nodeSelector."kubernetes.io/os" = "linux";
              priorityClassName = "system-cluster-critical";
              serviceAccountName = "dns-autoscaler";
              securityContext = { seccompProfile.type = "RuntimeDefault"; supplementalGroups = [ 65534 ]; fsGroup = 65534; };
              tolerations = [
                { effect = "NoSchedule"; operator = "Equal"; key = "node-role.kubernetes.io/control-plane"; }
              ];
              containers = [{
                name = "autoscaler";
                image = ctx.images.dnsAutoscaler;
                imagePullPolicy = s.kubernetes.imagePullPolicy;
                resources.requests = { cpu = "20m"; memory = "10Mi"; };
                command = [
                  "/cluster-proportional-autoscaler"
                  "--namespace=kube-system"
                  "--default-params=${params}"
                  "--logtostderr=true"
                  "--v=2"
                  "--configmap=dns-autoscaler"
                  "--target=Deployment/coredns"
                ];
              }];
            };
          };
        };
      };
    };
}
