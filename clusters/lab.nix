# The local lab as a real Kubernetes cluster: three systemd-nspawn nodes on 10.77.0.0/24
# booted by `lab/lab.sh up --k8s`, one control plane and two workers, all three etcd
# members (mutual TLS, kdeploy's PKI), flannel (host-gw: the nodes share one bridge) and
# CoreDNS. Everything runs: kubeadm init and join, the kubelet, the control plane as static
# pods, kube-proxy, flannel, CoreDNS.
#
# Air-gapped, as a real offline site: the binaries are files of the deployer that
# lab/build-k8s.sh built from their Go modules (download.local; the switch needs
# KDEPLOY_ALLOW_LOCAL=/var/cache/kdeploy-lab/bin), the images come from the lab's own
# registry at 10.77.0.1:5000 that lab/images.sh filled (kubernetes.imageRepo,
# download.dockerImageRepo, and a plain-HTTP registry entry for containerd).
# What the lab's nodes need besides (cgroup v1 with the cgroupfs driver, no /lib/modules,
# no default route, the host's conntrack table) is set below and says why.
let
  kd = import <kdeploy>;
  registry = "10.77.0.1:5000";
  bin = "/var/cache/kdeploy-lab/bin";
  k8s = "${bin}/kubernetes-1.34.4";
in
kd.cluster {
  name = "lab";
  nodes = {
    k8s-master = { address = "10.77.0.11"; roles = [ "control-plane" "etcd" ]; };
    k8s-worker01 = { address = "10.77.0.12"; roles = [ "worker" "etcd" ]; };
    k8s-worker02 = { address = "10.77.0.13"; roles = [ "worker" "etcd" ]; };
  };
  settings = {
    network.nodeCIDR = "10.77.0.0/24";
    kubernetes.version = "1.34.4";

    download.local = {
      kubelet = "${k8s}/kubelet";
      kubeadm = "${k8s}/kubeadm";
      kubectl = "${k8s}/kubectl";
      crictl = "${bin}/crictl-1.34.0/crictl";
      cni-plugins = "${bin}/cni-1.9.0";
      # Debian 12's containerd and runc (dpkg -L containerd runc)
      etcd = "${bin}/etcd-3.5.33/etcd";
      etcdctl = "${bin}/etcd-3.5.33/etcdctl";
      containerd = "/usr/bin/containerd";
      containerd-shim-runc-v2 = "/usr/bin/containerd-shim-runc-v2";
      ctr = "/usr/bin/ctr";
      runc = "/usr/sbin/runc";
    };
    cni.version = "1.9.0";
    containerd.version = "1.6.20"; # -> config.toml schema version 2
    etcd.version = "3.5.33"; # kubeadm 1.34 wants >= 3.5.24

    # The lab registry (lab/images.sh): what it holds, under the names Kubespray uses.
    kubernetes.imageRepo = registry;
    download.dockerImageRepo = registry;
    dns.coredns.version = "1.14.7";
    flannel.version = "v0.28.10";
    flannel.cniVersion = "v0.9.1";
    loadBalancer.nginxVersion = "1.22.1";
    containerd.registryMirrors = {
      "${registry}" = [ { host = "http://${registry}"; capabilities = [ "pull" "resolve" ]; skipVerify = true; } ];
    };

    # The nodes' cgroups are v1 (the host's), with each node's own controllers.
    kubelet.cgroupDriver = "cgroupfs";
    containerd.systemdCgroup = false;
    # The host (hence every node) lacks CAP_SYS_RESOURCE: no negative oom_score_adj.
    containerd.restrictOomScoreAdj = true;
    # Every node sees the host's file system: a percentage of it says nothing about the
    # node (the kubelet's defaults, 10-15% free, evicted every pod once the host's disk
    # passed 85% full), so the thresholds are absolute.
    kubelet.evictionHard = {
      "memory.available" = "100Mi";
      "nodefs.available" = "2Gi";
      "nodefs.inodesFree" = "5%";
      "imagefs.available" = "2Gi";
    };

    network.plugin = "flannel";
    flannel.backend = "host-gw"; # one bridge: no tunnel needed
    flannel.interface = "eth0"; # the nodes have no default route to guess it from
    kubeProxy.mode = "iptables"; # ipvs loads kernel modules; a node has no /lib/modules
    kubeProxy.conntrackMaxPerCore = 0; # the conntrack table is the host's: leave it alone
    dns.nodelocaldns.enable = false; # k8s.io/dns (node-cache) is not served by the module proxy here
    dns.autoscaler.enable = false; # not built for the lab
    dns.coredns.replicas = 2;
    kubeadm.ignorePreflightErrors = [ "SystemVerification" ]; # no /lib/modules, no kernel config
  };
}
