# The etcd-only lab the day-two tests run on (switch, rollback, crash safety, membership,
# secrets, drift...): three systemd-nspawn nodes on 10.77.0.0/24, all three etcd members,
# k8s-master the control plane, with Debian 12's own binaries (no build needed).
#
# What runs: preinstall, container-runtime (Debian's containerd 1.6 + runc), download
# (etcd/etcdctl as local files) and etcd (a 3-member etcd 3.4 with mutual TLS from the PKI
# kdeploy makes on the first switch). The Kubernetes phases are generated, hashed and
# pushed but not activated (kdeploy.generateOnly), which keeps each of these tests to
# seconds; Kubernetes itself runs in clusters/lab.nix (tests/lab/kubernetes.rs).
let kd = import <kdeploy>; in
kd.cluster {
  name = "lab";
  nodes = {
    k8s-master = { address = "10.77.0.11"; roles = [ "control-plane" "etcd" ]; };
    k8s-worker01 = { address = "10.77.0.12"; roles = [ "worker" "etcd" ]; };
    k8s-worker02 = { address = "10.77.0.13"; roles = [ "worker" "etcd" ]; };
  };
  settings = {
    network.nodeCIDR = "10.77.0.0/24";

    # Binaries from the deployer's Debian 12 packages (dpkg -L etcd-server etcd-client
    # containerd runc); the versions tell the stdlib which config dialect to render.
    download.local = {
      etcd = "/usr/bin/etcd";
      etcdctl = "/usr/bin/etcdctl";
      containerd = "/usr/bin/containerd";
      containerd-shim-runc-v2 = "/usr/bin/containerd-shim-runc-v2";
      ctr = "/usr/bin/ctr";
      runc = "/usr/sbin/runc";
    };
    download.skip = [ "crictl" ]; # not packaged in Debian 12; only the kubelet needs it
    containerd.version = "1.6.20"; # -> config.toml schema version 2
    etcd.version = "3.4.23"; # -> etcd 3.4 flags (ETCD_LOGGER=zap, v2 proxy off)

    kdeploy.generateOnly = [ "kubelet" "control-plane" "cni" "addons" "resolvconf" ];
  };
}
