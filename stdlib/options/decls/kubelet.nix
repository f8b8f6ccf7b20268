# Options of the kubelet: kubelet.env flags and kubelet-config.yaml
# (Kubespray's kubernetes/node defaults and kubelet_* variables).
{ opt, t, versions, ... }:
let
  reserved = t.struct "a reservation { cpu?; memory?; ephemeralStorage?; pid?; }" {
    cpu = { type = t.quantity; default = "100m"; };
    memory = { type = t.quantity; default = "256Mi"; };
    ephemeralStorage = { type = t.quantity; default = "500Mi"; };
    pid = { type = t.quantity; default = "1000"; };
  };
in
{
  kubelet = {
    maxPods = opt {
      type = t.intBetween 1 2500; default = 110; kubespray = "kubelet_max_pods";
      description = "Maximum number of pods on the node.";
    };
    podPidsLimit = opt {
      type = t.int; default = -1; kubespray = "kubelet_pod_pids_limit";
      description = "Maximum processes per pod (-1: unlimited).";
    };
    cgroupDriver = opt {
      type = t.enum [ "systemd" "cgroupfs" ]; default = "systemd"; kubespray = "kubelet_cgroup_driver";
      description = "cgroup driver (must match containerd.systemdCgroup).";
    };
    failCgroupV1 = opt {
      type = t.bool; default = true; kubespray = "kubelet_fail_cgroup_v1";
      description = "failCgroupV1 of Kubernetes 1.35 and later: refuse to run on cgroup v1. false keeps a cgroup v1 node (Kubernetes' own deprecation warning applies).";
    };
    failSwapOn = opt {
      type = t.bool; default = true; kubespray = "kubelet_fail_swap_on";
      description = "Refuse to run with swap on. When true, preinstall turns swap off and masks swap.target.";
    };
    protectKernelDefaults = opt {
      type = t.bool; default = true; kubespray = "kubelet_protect_kernel_defaults";
      description = "Fail if kernel tunables differ from kubelet's expectations; preinstall then sets them in sysctl.";
    };
    rotateCertificates = opt {
      type = t.bool; default = true; kubespray = "kubelet_rotate_certificates";
      description = "Rotate the kubelet client certificate.";
    };
    rotateServerCertificates = opt {
      type = t.bool; default = false; kubespray = "kubelet_rotate_server_certificates";
      description = "Request serving certificates from the API (serverTLSBootstrap).";
    };
    authenticationTokenWebhook = opt {
      type = t.bool; default = true; kubespray = "kubelet_authentication_token_webhook";
      description = "Accept API bearer tokens on the kubelet API.";
    };
    authorizationModeWebhook = opt {
      type = t.bool; default = true; kubespray = "kubelet_authorization_mode_webhook";
      description = "Authorize kubelet API access through the API server (else AlwaysAllow).";
    };
    statusUpdateFrequency = opt {
      type = t.duration; default = "10s"; kubespray = "kubelet_status_update_frequency";
      description = "nodeStatusUpdateFrequency.";
    };
    logfilesMaxNr = opt {
      type = t.int; default = 5; kubespray = "kubelet_logfiles_max_nr";
      description = "containerLogMaxFiles.";
    };
    logfilesMaxSize = opt {
      type = t.quantity; default = "10Mi"; kubespray = "kubelet_logfiles_max_size";
      description = "containerLogMaxSize.";
    };
    shutdownGracePeriod = opt {
      type = t.duration; default = "60s"; kubespray = "kubelet_shutdown_grace_period";
      description = "shutdownGracePeriod.";
    };
    shutdownGracePeriodCriticalPods = opt {
      type = t.duration; default = "20s"; kubespray = "kubelet_shutdown_grace_period_critical_pods";
      description = "shutdownGracePeriodCriticalPods.";
    };
    eventRecordQPS = opt {
      type = t.int; default = 50; kubespray = "kubelet_event_record_qps";
      description = "eventRecordQPS (0: unlimited).";
    };
    maxParallelImagePulls = opt {
      type = t.int; default = 1; kubespray = "kubelet_max_parallel_image_pulls";
      description = "maxParallelImagePulls (1 pulls serially).";
    };
    readOnlyPort = opt {
      type = t.intBetween 0 65535; default = 0; kubespray = "kube_read_only_port";
      description = "Unauthenticated read-only port (0: off).";
    };
    healthzPort = opt {
      type = t.port; default = 10248; kubespray = "kubelet_healthz_port";
      description = "healthzPort.";
    };
    healthzBindAddress = opt {
      type = t.ipAddress; default = "127.0.0.1"; kubespray = "kubelet_healthz_bind_address";
      description = "healthzBindAddress.";
    };
    kubeReserved = opt {
      type = t.nullOr reserved; default = null; kubespray = "kube_reserved / kube_*_reserved";
      description = "Resources reserved for Kubernetes daemons (null: none).";
    };
    systemReserved = opt {
      type = t.nullOr reserved; default = null; kubespray = "system_reserved / system_*_reserved";
      description = "Resources reserved for the operating system (null: none).";
    };
    evictionHard = opt {
      type = t.attrsOf t.line; default = { }; kubespray = "eviction_hard";
      example = { "memory.available" = "100Mi"; };
      description = "evictionHard thresholds.";
    };
    featureGates = opt {
      type = t.listOf t.featureGate; default = [ ]; kubespray = "kubelet_feature_gates";
      description = "Kubelet feature gates (Name=bool); empty: kubernetes.featureGates.";
    };
    customFlags = opt {
      type = t.listOf t.flag; default = [ ]; kubespray = "kubelet_custom_flags";
      description = "Extra command-line flags for the kubelet.";
    };
    extraConfig = opt {
      type = t.attrsOf t.json; default = { }; kubespray = "kubelet_config_extra_args";
      description = "Extra KubeletConfiguration fields (they win over kdeploy's).";
    };
  };
}
