# Options of the Kubernetes control plane: version, API server, controller manager,
# scheduler, kube-proxy, the API load balancer and kubeadm (Kubespray's
# kubespray_defaults, kubernetes/control-plane and kubernetes/node defaults).
{ opt, t, versions, ... }:
{
  kubernetes = {
    version = opt {
      type = t.version; default = versions.kubernetes.default; scope = "cluster";
      kubespray = "kube_version";
      description = "Kubernetes version to deploy. Needs checksums of kubelet, kubeadm and kubectl for every node architecture (stdlib/checksums.nix or download.checksums) and at least ${versions.kubernetes.minimum}.";
    };
    clusterName = opt {
      type = t.domain; default = "cluster.local"; scope = "cluster"; kubespray = "cluster_name";
      description = "Cluster name written into the kubeadm ClusterConfiguration.";
    };
    imageRepo = opt {
      type = t.registry; default = "registry.k8s.io"; scope = "cluster"; kubespray = "kube_image_repo";
      description = "Registry of the Kubernetes images (pause, control plane, CoreDNS, nodelocaldns, metrics-server).";
    };
    podInfraVersion = opt {
      type = t.nullOr t.imageTag; default = null; scope = "cluster"; kubespray = "pod_infra_version";
      description = "Tag of the pause (sandbox) image, <kubernetes.imageRepo>/pause (null: the one pinned for the Kubernetes minor version).";
    };
    imagePullPolicy = opt {
      type = t.enum [ "IfNotPresent" "Always" "Never" ]; default = "IfNotPresent"; scope = "cluster";
      kubespray = "k8s_image_pull_policy";
      description = "imagePullPolicy of the pods kdeploy writes.";
    };
    logLevel = opt {
      type = t.intBetween 0 10; default = 2; kubespray = "kube_log_level";
      description = "Verbosity (--v) of kubelet.";
    };
    featureGates = opt {
      type = t.listOf t.featureGate; default = [ ]; scope = "cluster"; kubespray = "kube_feature_gates";
      example = [ "SomeGate=true" ];
      description = "Feature gates (Name=bool) for all components.";
    };
  };

  apiserver = {
    port = opt {
      type = t.port; default = 6443; scope = "cluster"; kubespray = "kube_apiserver_port";
      description = "Secure port of kube-apiserver.";
    };
    bindAddress = opt {
      type = t.ipAddress; default = "::"; scope = "cluster"; kubespray = "kube_apiserver_bind_address";
      description = "Address kube-apiserver binds to.";
    };
    nodePortRange = opt {
      type = t.strMatching "a port range like \"30000-32767\"" "[0-9]+-[0-9]+"; default = "30000-32767";
      scope = "cluster"; kubespray = "kube_apiserver_node_port_range";
      description = "Port range reserved for NodePort services (also reserved in sysctl ip_local_reserved_ports).";
    };
    extraSANs = opt {
      type = t.listOf t.san; default = [ ]; scope = "cluster"; kubespray = "supplementary_addresses_in_ssl_keys";
      description = "Extra names/addresses for the API server certificate.";
    };
    authorizationModes = opt {
      type = t.listOf (t.enum [ "Node" "RBAC" "ABAC" "Webhook" "AlwaysAllow" "AlwaysDeny" ]);
      default = [ "Node" "RBAC" ]; scope = "cluster"; kubespray = "authorization_modes";
      description = "--authorization-mode of kube-apiserver, in order.";
    };
    anonymousAuth = opt {
      type = t.bool; default = true; scope = "cluster"; kubespray = "kube_api_anonymous_auth";
      description = "--anonymous-auth of kube-apiserver.";
    };
    extraArgs = opt {
      type = t.attrsWithNames t.argName t.line; default = { }; scope = "cluster"; kubespray = "kube_kubeadm_apiserver_extra_args";
      description = "Extra kube-apiserver flags (name without dashes = value).";
    };
  };

  controllerManager = {
    nodeMonitorGracePeriod = opt {
      type = t.duration; default = "40s"; scope = "cluster"; kubespray = "kube_controller_node_monitor_grace_period";
      description = "--node-monitor-grace-period of kube-controller-manager.";
    };
    extraArgs = opt {
      type = t.attrsWithNames t.argName t.line; default = { }; scope = "cluster"; kubespray = "kube_kubeadm_controller_extra_args";
      description = "Extra kube-controller-manager flags.";
    };
  };

  scheduler = {
    extraArgs = opt {
      type = t.attrsWithNames t.argName t.line; default = { }; scope = "cluster"; kubespray = "kube_kubeadm_scheduler_extra_args";
      description = "Extra kube-scheduler flags.";
    };
  };

  kubeProxy = {
    mode = opt {
      type = t.enum [ "ipvs" "iptables" "nftables" ]; default = "ipvs"; scope = "cluster";
      kubespray = "kube_proxy_mode";
      description = "kube-proxy mode. ipvs also loads the IPVS kernel modules on every node.";
    };
    remove = opt {
      type = t.bool; default = false; scope = "cluster"; kubespray = "kube_proxy_remove";
      description = "Do not deploy kube-proxy (kubeadm phase addon/kube-proxy is skipped).";
    };
    conntrackMaxPerCore = opt {
      type = t.int; default = 32768; scope = "cluster"; kubespray = "kube_proxy_conntrack_max_per_core";
      description = "conntrack.maxPerCore of kube-proxy; 0 leaves the kernel's nf_conntrack_max alone (containers and nodes that share the host's conntrack table, as kind does).";
    };
    strictARP = opt {
      type = t.bool; default = false; scope = "cluster"; kubespray = "kube_proxy_strict_arp";
      description = "ipvs.strictARP of kube-proxy (needed by MetalLB in L2 mode).";
    };
  };

  loadBalancer = {
    localhost = opt {
      type = t.bool; default = true; scope = "cluster"; kubespray = "loadbalancer_apiserver_localhost";
      description = "Run a localhost TCP load balancer to all API servers on every node without a control plane (static pod). Ignored when externalAddress is set.";
    };
    type = opt {
      type = t.enum [ "nginx" "haproxy" ]; default = "nginx"; scope = "cluster"; kubespray = "loadbalancer_apiserver_type";
      description = "Implementation of the localhost API load balancer.";
    };
    nginxVersion = opt {
      type = t.imageTag; default = versions.images.nginx; scope = "cluster"; kubespray = "nginx_image_tag";
      description = "Tag of the nginx image of the localhost load balancer, <download.dockerImageRepo>/library/nginx.";
    };
    haproxyVersion = opt {
      type = t.imageTag; default = versions.images.haproxy; scope = "cluster"; kubespray = "haproxy_image_tag";
      description = "Tag of the haproxy image of the localhost load balancer, <download.dockerImageRepo>/library/haproxy.";
    };
    port = opt {
      type = t.nullOr t.port; default = null; scope = "cluster"; kubespray = "loadbalancer_apiserver_port";
      description = "Local port of the localhost load balancer (null: apiserver.port).";
    };
    healthcheckPort = opt {
      type = t.nullOr t.port; default = null; scope = "cluster"; kubespray = "loadbalancer_apiserver_healthcheck_port";
      description = "If set, the localhost load balancer answers /healthz on this port.";
    };
    externalAddress = opt {
      type = t.nullOr t.host; default = null; scope = "cluster"; kubespray = "loadbalancer_apiserver.address";
      description = "Address (or DNS name) of an external API load balancer; when set, every node uses it.";
    };
    externalPort = opt {
      type = t.nullOr t.port; default = null; scope = "cluster"; kubespray = "loadbalancer_apiserver.port";
      description = "Port of the external load balancer (null: apiserver.port).";
    };
  };

  kubeadm = {
    initNode = opt {
      type = t.nullOr t.plainName; default = null; scope = "cluster"; kubespray = "groups['kube_control_plane'][0]";
      example = "cp1";
      description = "The control plane that runs `kubeadm init` (the anchor: the others join it). null: the first control plane by name. kdeploy records the anchor with each switch and refuses a switch that would move it implicitly (a new control plane whose name sorts first would init a second cluster, kubespray#7962); set this to move it on purpose, to a control plane that has already joined.";
    };
    tokenFile = opt {
      type = t.nullOr t.str; default = null; scope = "cluster"; kubespray = "kubeadm_token";
      example = "secrets/kubeadm-token";
      description = "Your own bootstrap token file (format [a-z0-9]{6}.[a-z0-9]{16}); a relative path is a project file, an absolute one a file on the deployer. null: kdeploy makes one and keeps it in .kdeploy/secrets/<cluster>/kubeadm/token. Pushed to /etc/kubernetes/kdeploy/kubeadm-token (0600) for the init/join hooks as a secret (secretFile: sent only over SSH, never in the blob store, the binary cache, a diff or eval's output); it never enters the evaluated configuration.";
    };
    certificateKeyFile = opt {
      type = t.nullOr t.str; default = null; scope = "cluster"; kubespray = "kubeadm_certificate_key";
      example = "secrets/kubeadm-certificate-key";
      description = "Your own file holding the 64-hex-digit key that encrypts the control-plane certificates uploaded by `kubeadm init --upload-certs`. Read and sent as a secret, like tokenFile. null: kdeploy makes one (.kdeploy/secrets/<cluster>/kubeadm/certificate-key). Used with more than one control-plane node.";
    };
    ignorePreflightErrors = opt {
      type = t.listOf t.plainName; default = [ ]; scope = "cluster"; kubespray = "kubeadm_ignore_preflight_errors";
      description = "Preflight checks kubeadm should ignore.";
    };
    discoveryTimeout = opt {
      type = t.duration; default = "5m0s"; scope = "cluster"; kubespray = "discovery_timeout";
      description = "How long `kubeadm join` waits for the API server.";
    };
  };
}
