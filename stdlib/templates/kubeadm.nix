# kubeadm configuration (API kubeadm.k8s.io/v1beta4, Kubernetes >= 1.31):
# kubeadm-config.yaml for `kubeadm init` (Init + Cluster + KubeProxy + Kubelet
# configurations), JoinConfiguration for control-plane and worker joins, and the
# kube-scheduler configuration. Secrets are not in these texts: the placeholders
# @KDEPLOY_KUBEADM_TOKEN@, @KDEPLOY_CERTIFICATE_KEY@ and @KDEPLOY_CA_PIN@ are filled on the node by the
# init/join hooks from the pushed secret files (see `renderSecrets`).
let
  lib = import ../lib;
  inherit (lib) text yaml;
  inherit (builtins) map attrNames concatStringsSep;
  kubeletTpl = import ./kubelet.nix;

  tokenPH = "@KDEPLOY_KUBEADM_TOKEN@";
  keyPH = "@KDEPLOY_CERTIFICATE_KEY@";
  pinPH = "@KDEPLOY_CA_PIN@";
  api = "kubeadm.k8s.io/v1beta4";

  args = attrs: map (k: { name = k; value = attrs.${k}; }) (attrNames attrs);

  taints = node:
    if node.isControlPlane && !node.isWorker
    then [{ effect = "NoSchedule"; key = "node-role.kubernetes.io/control-plane"; }]
    else [ ];

  nodeRegistration = ctx: node: {
    name = node.name;
    criSocket = "unix:///var/run/containerd/containerd.sock";
    taints = taints node;
    imagePullPolicy = ctx.settings.kubernetes.imagePullPolicy;
    imagePullSerial = true;
  } // (if ctx.settings.kubeadm.ignorePreflightErrors != [ ] then { ignorePreflightErrors = ctx.settings.kubeadm.ignorePreflightErrors; } else { });

  multiCP = ctx: builtins.length ctx.controlPlanes > 1;

  # kdeploy's managed files are symlinks through /var/lib/kdeploy (one rename switches a
  # phase); a static pod that mounts their directory (the etcd client certificates, the
  # CA in /etc/kubernetes/ssl) must see the link targets too. Read-only, at the same path.
  # (Found when the control plane first ran in the lab: the API server could not read
  # the etcd certificates through dangling links.)
  kdeployVolume = {
    name = "kdeploy-managed-files";
    hostPath = "/var/lib/kdeploy";
    mountPath = "/var/lib/kdeploy";
    readOnly = true;
    pathType = "Directory";
  };
in
rec {
  inherit tokenPH keyPH pinPH;

  skipPhases = ctx: [ "addon/coredns" ] ++ text.optional ctx.settings.kubeProxy.remove "addon/kube-proxy";

  initConfig = { ctx, node }:
    let
      s = ctx.settings;
      fg = s.kubernetes.featureGates;
      podCIDR = s.network.podCIDR;
      svcCIDR = s.network.serviceCIDR;
      hostLocalIPAM = s.network.plugin != "calico";
      calicoLike = s.network.plugin == "calico";

      init = {
        apiVersion = api;
        kind = "InitConfiguration";
        bootstrapTokens = [{ token = tokenPH; description = "kdeploy kubeadm bootstrap token"; ttl = "24h0m0s"; }];
        localAPIEndpoint = { advertiseAddress = node.address; bindPort = s.apiserver.port; };
        nodeRegistration = nodeRegistration ctx node;
        # phases to skip are passed as --skip-phases by the init hook, as Kubespray does
      } // (if multiCP ctx then { certificateKey = keyPH; } else { });

      etcd =
        if s.etcd.deploymentType == "kubeadm" then {
          local = {
            dataDir = s.etcd.dataDir;
            extraArgs = args {
              metrics = s.etcd.metrics;
              election-timeout = toString s.etcd.electionTimeout;
              heartbeat-interval = toString s.etcd.heartbeatInterval;
              auto-compaction-retention = s.etcd.compactionRetention;
              snapshot-count = toString s.etcd.snapshotCount;
              quota-backend-bytes = toString s.etcd.quotaBackendBytes;
              max-request-bytes = toString s.etcd.maxRequestBytes;
              log-level = s.etcd.logLevel;
            };
          };
        } else {
          external = { endpoints = ctx.etcd.endpoints; }
            // (if s.etcd.tls then {
              caFile = "${ctx.etcd.certDir}/ca.pem";
              certFile = "${ctx.etcd.certDir}/node-${node.name}.pem";
              keyFile = "${ctx.etcd.certDir}/node-${node.name}-key.pem";
            } else { });
        };

      cluster = {
        apiVersion = api;
        kind = "ClusterConfiguration";
        clusterName = s.kubernetes.clusterName;
        kubernetesVersion = "v${ctx.versions.kube}";
        controlPlaneEndpoint = ctx.api.controlPlaneEndpoint;
        certificatesDir = "/etc/kubernetes/ssl";
        imageRepository = s.kubernetes.imageRepo;
        inherit etcd;
        dns = {
          disabled = true; # CoreDNS comes with the addons phase
          imageRepository = "${s.kubernetes.imageRepo}/coredns";
          imageTag = "v${ctx.versions.coredns}";
        };
        networking = {
          dnsDomain = s.dns.domain;
          serviceSubnet = svcCIDR;
          podSubnet = podCIDR;
        };
        apiServer = {
          certSANs = ctx.api.sans;
          extraArgs = args ({
            etcd-compaction-interval = "5m0s";
            default-not-ready-toleration-seconds = "300";
            default-unreachable-toleration-seconds = "300";
            anonymous-auth = text.boolStr s.apiserver.anonymousAuth;
            authorization-mode = concatStringsSep "," s.apiserver.authorizationModes;
            bind-address = s.apiserver.bindAddress;
            endpoint-reconciler-type = "lease";
            service-node-port-range = s.apiserver.nodePortRange;
            service-cluster-ip-range = svcCIDR;
            kubelet-preferred-address-types = "InternalDNS,InternalIP,Hostname,ExternalDNS,ExternalIP";
            profiling = "false";
            request-timeout = "1m0s";
            enable-aggregator-routing = "false";
            service-account-lookup = "true";
            storage-backend = "etcd3";
            allow-privileged = "true";
            event-ttl = "1h0m0s";
          }
          // (if fg != [ ] then { feature-gates = concatStringsSep "," fg; } else { })
          // s.apiserver.extraArgs);
          extraVolumes = [ kdeployVolume ];
        };
        controllerManager.extraVolumes = [ kdeployVolume ];
        controllerManager.extraArgs = args ({
          node-monitor-grace-period = s.controllerManager.nodeMonitorGracePeriod;
          node-monitor-period = "5s";
          cluster-cidr = podCIDR;
          service-cluster-ip-range = svcCIDR;
          profiling = "false";
          terminated-pod-gc-threshold = "12500";
          bind-address = "::";
          leader-elect-lease-duration = "15s";
          leader-elect-renew-deadline = "10s";
          configure-cloud-routes = "false";
          flex-volume-plugin-dir = "/usr/libexec/kubernetes/kubelet-plugins/volume/exec";
        }
        # calico allocates pod addresses itself; other plugins use node.spec.podCIDR
        // (if calicoLike then { allocate-node-cidrs = "false"; }
            else { node-cidr-mask-size-ipv4 = toString s.network.nodePrefix; })
        // (if fg != [ ] then { feature-gates = concatStringsSep "," fg; } else { })
        // s.controllerManager.extraArgs);
        scheduler = {
          extraArgs = args ({
            bind-address = "::";
            config = "/etc/kubernetes/kubescheduler-config.yaml";
            profiling = "false";
          }
          // (if fg != [ ] then { feature-gates = concatStringsSep "," fg; } else { })
          // s.scheduler.extraArgs);
          extraVolumes = [
            {
              name = "kubescheduler-config";
              hostPath = "/etc/kubernetes/kubescheduler-config.yaml";
              mountPath = "/etc/kubernetes/kubescheduler-config.yaml";
              readOnly = true;
            }
            kdeployVolume
          ];
        };
      };

      proxy = {
        apiVersion = "kubeproxy.config.k8s.io/v1alpha1";
        kind = "KubeProxyConfiguration";
        bindAddress = "0.0.0.0";
        clusterCIDR = podCIDR;
        mode = s.kubeProxy.mode;
        healthzBindAddress = "0.0.0.0:10256";
        metricsBindAddress = "127.0.0.1:10249";
        nodePortAddresses = [ ];
        oomScoreAdj = -999;
        conntrack = { maxPerCore = s.kubeProxy.conntrackMaxPerCore; min = 131072; tcpCloseWaitTimeout = "1h0m0s"; tcpEstablishedTimeout = "24h0m0s"; };
        iptables = { masqueradeAll = false; masqueradeBit = 14; minSyncPeriod = "0s"; syncPeriod = "30s"; };
        ipvs = { excludeCIDRs = [ ]; minSyncPeriod = "0s"; scheduler = "rr"; syncPeriod = "30s"; strictARP = s.kubeProxy.strictARP; tcpTimeout = "0s"; tcpFinTimeout = "0s"; udpTimeout = "0s"; };
      } // (if fg != [ ] then { featureGates = kubeletTpl.gates fg; } else { });

      kubelet = {
        apiVersion = "kubelet.config.k8s.io/v1beta1";
        kind = "KubeletConfiguration";
        clusterDNS = ctx.clusterDNS;
      } // (if fg != [ ] then { featureGates = kubeletTpl.gates fg; } else { });
    in
    # The comment belongs to the first document: kubeadm refuses an empty document
    # (a comment followed by "---"), found when kubeadm first ran in the lab.
    "# kubeadm init configuration (managed by kdeploy); secrets are filled in by the init hook.\n"
    + builtins.substring 4 (-1) (yaml.documents ([ init cluster ] ++ text.optional (!s.kubeProxy.remove) proxy ++ [ kubelet ]));

  # The join configuration of every node of a group, as a function of the node:
  # rendered once, with each node's registration (and control-plane endpoint) spliced
  # in (yaml.withShared).
  joinConfig = { ctx, controlPlane }:
    let
      s = ctx.settings;
      render = yaml.withShared {
        apiVersion = api;
        kind = "JoinConfiguration";
        discovery = {
          bootstrapToken = {
            apiServerEndpoint = ctx.api.controlPlaneEndpoint;
            token = tokenPH;
            # The CA kdeploy made and gave the first control plane: a join trusts only
            # an API server that presents it (never unsafeSkipCAVerification).
            caCertHashes = [ pinPH ];
          };
          tlsBootstrapToken = tokenPH;
        };
        timeouts.discovery = s.kubeadm.discoveryTimeout;
        caCertPath = "/etc/kubernetes/ssl/ca.crt";
      };
    in
    node:
    "# kubeadm join configuration (managed by kdeploy); secrets are filled in by the join hook.\n"
    + render ({ nodeRegistration = nodeRegistration ctx node; } // (if controlPlane then {
        controlPlane = {
          localAPIEndpoint = { advertiseAddress = node.address; bindPort = s.apiserver.port; };
          certificateKey = keyPH;
        };
      } else { }));

  schedulerConfig = { ctx }: yaml.toYAML {
    apiVersion = "kubescheduler.config.k8s.io/v1";
    kind = "KubeSchedulerConfiguration";
    clientConnection.kubeconfig = "/etc/kubernetes/scheduler.conf";
    leaderElection = { leaseDuration = "15s"; renewDeadline = "10s"; };
  };

  # POSIX sh: point every "server:" line of kubeconfig $1 at URL $2 (in place, same mode).
  setServer = ''
    kd_set_server() {
      ( umask 077
        while IFS= read -r l || [ -n "$l" ]; do
          case $l in *"server: "*) l="''${l%%server: *}server: $2" ;; esac
          printf '%s\n' "$l"
        done < "$1" > "$1.kdeploy-new" )
      chmod --reference="$1" "$1.kdeploy-new" && mv "$1.kdeploy-new" "$1"
    }
  '';

  # POSIX sh: copy $1 to $2 (mode 0600) replacing the secret placeholders with the
  # contents of the pushed secret files. Used by the init/join hooks.
  renderSecrets = ''
    kd_render() {
      if [ ! -s /etc/kubernetes/kdeploy/kubeadm-token ]; then
        echo "kdeploy: kubeadm.tokenFile is not set (or empty); refusing to run kubeadm" >&2
        exit 1
      fi
      kd_token=$(cat /etc/kubernetes/kdeploy/kubeadm-token)
      case $kd_token in
        [a-z0-9][a-z0-9][a-z0-9][a-z0-9][a-z0-9][a-z0-9].[a-z0-9]*) ;;
        *) echo "kdeploy: the kubeadm token must look like abcdef.0123456789abcdef" >&2; exit 1 ;;
      esac
      kd_key=$(cat /etc/kubernetes/kdeploy/kubeadm-certificate-key 2>/dev/null || true)
      kd_pin=$(cat /etc/kubernetes/kdeploy/ca-pin 2>/dev/null || true)
      case $kd_pin in
        sha256:????????????????????????????????????????????????????????????????) ;;
        *) if grep -q ${pinPH} "$1"; then echo "kdeploy: /etc/kubernetes/kdeploy/ca-pin is missing or malformed; refusing to join without pinning the CA" >&2; exit 1; fi ;;
      esac
      mkdir -p /run/kdeploy && chmod 0700 /run/kdeploy
      ( umask 077
        while IFS= read -r l || [ -n "$l" ]; do
          case $l in *${tokenPH}*) l="''${l%%${tokenPH}*}$kd_token''${l#*${tokenPH}}" ;; esac
          case $l in *${keyPH}*) l="''${l%%${keyPH}*}$kd_key''${l#*${keyPH}}" ;; esac
          case $l in *${pinPH}*) l="''${l%%${pinPH}*}$kd_pin''${l#*${pinPH}}" ;; esac
          printf '%s\n' "$l"
        done < "$1" > "$2" )
    }
  '';
}
