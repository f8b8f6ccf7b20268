# Pinned versions and download URLs. The sha256 of every release file is in
# checksums.nix (Kubespray's shape, amd64 and arm64); a version is usable when it has a
# checksum there or in the cluster's download.checksums. Per Kubernetes minor version
# we pin the matching etcd, CoreDNS, pause and crictl versions the way Kubespray does.
{
  kubernetes = {
    # Oldest version kdeploy's templates support (kubeadm API v1beta4 needs >= 1.31).
    minimum = "1.31.0";
    default = "1.33.5";
    # Companion versions per minor (Kubespray: etcd_supported_versions,
    # coredns_supported_versions, pod_infra_supported_versions, crictl by minor).
    minors = {
      "1.31" = { etcd = "3.5.23"; coredns = "1.11.3"; pause = "3.10"; crictl = "1.31.1"; };
      "1.32" = { etcd = "3.5.23"; coredns = "1.11.3"; pause = "3.10"; crictl = "1.32.0"; };
      "1.33" = { etcd = "3.5.23"; coredns = "1.12.0"; pause = "3.10"; crictl = "1.33.0"; };
      "1.34" = { etcd = "3.5.33"; coredns = "1.12.1"; pause = "3.10.1"; crictl = "1.34.0"; };
      "1.35" = { etcd = "3.6.14"; coredns = "1.12.4"; pause = "3.10.1"; crictl = "1.35.0"; };
    };
  };

  containerd.default = "2.1.4";
  runc.default = "1.3.2";
  calico.default = "3.30.3";
  cni = {
    default = "1.8.0";
    # The plugin binaries placed in /opt/cni/bin (members of the archive).
    plugins = [ "bandwidth" "bridge" "dhcp" "dummy" "firewall" "host-device" "host-local" "ipvlan"
      "loopback" "macvlan" "portmap" "ptp" "sbr" "static" "tap" "tuning" "vlan" "vrf" ];
  };

  # Image tags (pulled by containerd, verified by registry digest, not by this table).
  images = {
    flannel = "v0.27.3";
    flannelCniPlugin = "v1.7.1-flannel1";
    nginx = "1.28.0-alpine";
    haproxy = "3.2.4-alpine";
    nodelocaldns = "1.25.0";
    dnsAutoscaler = "v1.8.8";
    metricsServer = "v0.8.0";
  };

  # Download locations; `base` values come from settings (download.githubUrl, ...).
  urls = {
    kube = { dlK8sIo, version, component, arch }: "${dlK8sIo}/release/v${version}/bin/linux/${arch}/${component}";
    etcd = { github, version, arch }: "${github}/etcd-io/etcd/releases/download/v${version}/etcd-v${version}-linux-${arch}.tar.gz";
    containerd = { github, version, arch }: "${github}/containerd/containerd/releases/download/v${version}/containerd-${version}-linux-${arch}.tar.gz";
    runc = { github, version, arch }: "${github}/opencontainers/runc/releases/download/v${version}/runc.${arch}";
    crictl = { github, version, arch }: "${github}/kubernetes-sigs/cri-tools/releases/download/v${version}/crictl-v${version}-linux-${arch}.tar.gz";
    cni = { github, version, arch }: "${github}/containernetworking/plugins/releases/download/v${version}/cni-plugins-linux-${arch}-v${version}.tgz";
    calicoctl = { github, version, arch }: "${github}/projectcalico/calico/releases/download/v${version}/calicoctl-linux-${arch}";
    calicoCrds = { github, version }: "${github}/projectcalico/calico/raw/v${version}/manifests/crds.yaml";
  };
}
