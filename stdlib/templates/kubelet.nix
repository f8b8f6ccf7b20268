# kubelet files: kubelet.env (flags), kubelet-config.yaml (KubeletConfiguration) and
# kubelet.service, with the meaning of Kubespray's kubelet_* settings.
let
  lib = import ../lib;
  inherit (lib) text yaml;
  inherit (builtins) concatStringsSep map listToAttrs match elemAt filter;
  atLeast = lib.version.atLeast;

  # [ "A=true" "B=false" ] -> { A = true; B = false; }
  gates = gs: listToAttrs (map
    (g:
      let m = match "([^=]+)=(.*)" g; in
      if m == null then { name = g; value = true; }
      else { name = elemAt m 0; value = elemAt m 1 == "true"; })
    gs);

  reserved = r: {
    inherit (r) cpu memory pid;
    "ephemeral-storage" = r.ephemeralStorage;
  };
in
{
  env = { ctx, node }:
    let
      s = node.settings;
      k = s.kubelet;
      args = [
        "--bootstrap-kubeconfig=/etc/kubernetes/bootstrap-kubelet.conf"
        "--config=/etc/kubernetes/kubelet-config.yaml"
        "--kubeconfig=/etc/kubernetes/kubelet.conf"
        "--runtime-cgroups=/system.slice/containerd.service"
      ] ++ k.customFlags;
    in
    text.lines [
      "# kubelet flags (managed by kdeploy)."
      "KUBE_LOG_LEVEL=\"--v=${toString ctx.settings.kubernetes.logLevel}\""
      "KUBELET_ADDRESS=\"--node-ip=${node.address}\""
      "KUBELET_HOSTNAME=\"--hostname-override=${node.name}\""
      "KUBELET_ARGS=\"${concatStringsSep " " args}\""
      "KUBELET_CLOUDPROVIDER=\"\""
      "PATH=${ctx.settings.paths.binDir}:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
    ];

  # The configuration of every node of `group` (see ../phases/default.nix), as a
  # function of the node: rendered once for the group, with each node's address
  # spliced in (yaml.withShared).
  config = { ctx, group, resolvConf }:
    let
      s = group.settings;
      k = s.kubelet;
      kube = ctx.versions.kube;
      fg = if k.featureGates != [ ] then k.featureGates else ctx.settings.kubernetes.featureGates;
      base = {
        apiVersion = "kubelet.config.k8s.io/v1beta1";
        kind = "KubeletConfiguration";
        nodeStatusUpdateFrequency = k.statusUpdateFrequency;
        failSwapOn = k.failSwapOn;
        authentication = {
          anonymous.enabled = false;
          webhook.enabled = k.authenticationTokenWebhook;
          x509.clientCAFile = "/etc/kubernetes/ssl/ca.crt";
        };
        authorization.mode = if k.authorizationModeWebhook then "Webhook" else "AlwaysAllow";
        staticPodPath = "/etc/kubernetes/manifests";
        cgroupDriver = k.cgroupDriver;
        containerLogMaxFiles = k.logfilesMaxNr;
        containerLogMaxSize = k.logfilesMaxSize;
        containerRuntimeEndpoint = "unix:///var/run/containerd/containerd.sock";
        maxPods = k.maxPods;
        podPidsLimit = k.podPidsLimit;
        readOnlyPort = k.readOnlyPort;
        healthzPort = k.healthzPort;
        healthzBindAddress = k.healthzBindAddress;
        kubeletCgroups = "/system.slice/kubelet.service";
        clusterDomain = ctx.settings.dns.domain;
        clusterDNS = ctx.clusterDNS;
        resolvConf = resolvConf;
        eventRecordQPS = k.eventRecordQPS;
        shutdownGracePeriod = k.shutdownGracePeriod;
        shutdownGracePeriodCriticalPods = k.shutdownGracePeriodCriticalPods;
        maxParallelImagePulls = k.maxParallelImagePulls;
      }
      // (if k.maxParallelImagePulls > 1 then { serializeImagePulls = false; } else { })
      // (if k.protectKernelDefaults then { protectKernelDefaults = true; } else { })
      // (if k.rotateCertificates then { rotateCertificates = true; } else { })
      // (if k.rotateServerCertificates then { serverTLSBootstrap = true; } else { })
      // (if atLeast kube "1.35.0" then { failCgroupV1 = k.failCgroupV1; } else { })
      // (if k.kubeReserved != null then { kubeReserved = reserved k.kubeReserved; } else { })
      // (if k.systemReserved != null then { systemReserved = reserved k.systemReserved; } else { })
      // (if k.evictionHard != { } then { evictionHard = k.evictionHard; } else { })
      // (if fg != [ ] then { featureGates = gates fg; } else { })
      // (if !k.failSwapOn then { memorySwap.swapBehavior = "LimitedSwap"; } else { });
      render = yaml.withShared (base // k.extraConfig);
    in
    node: "# KubeletConfiguration (managed by kdeploy).\n"
      + render (if k.extraConfig ? address then { } else { address = node.address; });

  unit = { binDir }: text.lines [
    "[Unit]"
    "Description=Kubernetes Kubelet Server (managed by kdeploy)"
    "Documentation=https://kubernetes.io/docs/reference/command-line-tools-reference/kubelet/"
    "After=containerd.service"
    "Wants=containerd.service"
    ""
    "[Service]"
    "EnvironmentFile=-/etc/kubernetes/kubelet.env"
    "ExecStart=${binDir}/kubelet $KUBE_LOG_LEVEL $KUBELET_ADDRESS $KUBELET_HOSTNAME $KUBELET_ARGS $KUBELET_CLOUDPROVIDER"
    "Restart=always"
    "RestartSec=10s"
    ""
    "[Install]"
    "WantedBy=multi-user.target"
  ];

  inherit gates;
}
