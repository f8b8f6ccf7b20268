# Less common setting combinations, evaluated by run.sh and put through the same content
# checks as the example clusters (YAML parses, scripts pass sh -n, unit triggers refer to
# files of the same or an earlier phase, no path is written twice on a node).
let
  kd = import <kdeploy>;
  base = {
    cp1 = { address = "10.1.0.1"; roles = [ "control-plane" "etcd" ]; };
    cp2 = { address = "10.1.0.2"; roles = [ "control-plane" "etcd" ]; };
    cp3 = { address = "10.1.0.3"; roles = [ "control-plane" "etcd" ]; };
    w1 = { address = "10.1.0.11"; roles = [ "worker" ]; };
  };
  mk = name: extra: kd.cluster ({ inherit name; nodes = base; } // extra);
in
{
  # the form from the project brief, verbatim
  brief-example = kd.cluster {
    name = "lab";
    nodes = {
      k8s-master   = { address = "10.3.0.6"; roles = [ "control-plane" "etcd" ]; };
      k8s-worker01 = { address = "10.3.0.7"; roles = [ "worker" ]; };
      k8s-worker02 = { address = "10.3.0.8"; roles = [ "worker" ]; settings.kubelet.maxPods = 200; };
    };
    settings = { kubernetes.version = "1.31.4"; network.plugin = "calico"; };
  };
  flannel-haproxy = mk "flannel-haproxy" {
    settings = {
      network.plugin = "flannel";
      flannel.backend = "host-gw";
      loadBalancer.type = "haproxy";
      loadBalancer.healthcheckPort = 8081;
      kubeProxy.mode = "nftables";
      containerd.version = "2.3.4";
      kubernetes.version = "1.35.8";
    };
  };
  kubeadm-etcd = mk "kubeadm-etcd" {
    nodes = base // {
      cp1 = { address = "10.1.0.1"; roles = [ "control-plane" ]; };
      cp2 = { address = "10.1.0.2"; roles = [ "control-plane" ]; };
      cp3 = { address = "10.1.0.3"; roles = [ "control-plane" ]; };
    };
    settings = { etcd.deploymentType = "kubeadm"; kubeProxy.remove = true; dns.mode = "coredns_dual"; };
  };
  dedicated-etcd-tls = kd.cluster {
    name = "dedicated-etcd-tls";
    nodes = {
      cp1 = { address = "10.2.0.1"; roles = [ "control-plane" ]; };
      e1 = { address = "10.2.0.21"; roles = [ "etcd" ]; };
      e2 = { address = "10.2.0.22"; roles = [ "etcd" ]; };
      e3 = { address = "10.2.0.23"; roles = [ "etcd" ]; };
      w1 = { address = "10.2.0.11"; roles = [ "worker" ]; };
    };
    settings = {
      etcd.tls = true;
      etcd.certDir = "/srv/pki/etcd";
      kubernetes.version = "1.34.11";
      containerd.version = "1.7.28";
      loadBalancer.externalAddress = "api.example.com";
      dns.mode = "none";
      network.plugin = "cni";
      proxy.http = "http://proxy.example.com:3128";
      proxy.https = "http://proxy.example.com:3128";
    };
  };
  minimal = kd.cluster {
    name = "minimal";
    nodes.solo = { address = "10.3.0.1"; roles = [ "control-plane" "etcd" "worker" ]; };
    settings = {
      network.plugin = "none";
      dns.nodelocaldns.enable = false;
      dns.autoscaler.enable = false;
      kubelet.failSwapOn = false;
      kubelet.protectKernelDefaults = false;
      kubelet.maxParallelImagePulls = 3;
      kubelet.featureGates = [ "SomeGate=true" ];
      kubelet.extraConfig = { imageGCHighThresholdPercent = 80; };
      download.prePullImages = false;
      preinstall.manageEtcHosts = false;
      preinstall.additionalSysctl = { "kernel.pid_max" = 131072; };
    };
  };
}
