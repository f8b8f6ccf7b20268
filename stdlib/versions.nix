# The one table of pinned versions, download URLs and sha256 checksums (linux/amd64).
# Checksums are facts taken from Kubespray's checksums.yml (kubespray_defaults/vars);
# add a row here to support another version (a cluster can add its own with
# download.checksums, see artifacts.nix). Per Kubernetes minor version we pin the
# matching etcd, CoreDNS, pause and crictl versions the way Kubespray does.
rec {
  arch = "amd64";

  kubernetes = {
    # Oldest version kdeploy's templates support (kubeadm API v1beta4 needs >= 1.31).
    minimum = "1.31.0";
    default = "1.33.5";
    releases = {
      "1.31.4" = {
        kubelet = "9062fbb2b6054ecab07b9e841b0a49ab4acc224860b01c218d01ba95017c5e49";
        kubeadm = "6c8e2fd2fa2cab51debf215fcb9149b94e7046f69ff558290066875200975cf6";
        kubectl = "298e19e9c6c17199011404278f0ff8168a7eca4217edad9097af577023a5620f";
      };
      "1.32.9" = {
        kubelet = "fd7711d1f0c1e263e9332004858fc4a6c39462e3e2ee485706eea5297966ed9c";
        kubeadm = "183b3b12e39b3ed2dc2db25cbc17769610cdd5f02e9d1325ba747d54978d8f5f";
        kubectl = "509ae171bac7ad3b98cc49f5594d6bc84900cf6860f155968d1059fde3be5286";
      };
      "1.33.5" = {
        kubelet = "8f6106b970259486c5af5cbee404d4f23406d96d99dfb92a6965b299c2a4db0e";
        kubeadm = "6761219749c6c67a56a5668dfe65d669e0c1f34d4b280b72de6d74d47c601f1e";
        kubectl = "6a12d6c39e4a611a3687ee24d8c733961bb4bae1ae975f5204400c0a6930c6fc";
      };
      "1.34.11" = {
        kubelet = "4777a226b2ba3c1d656254bcf3f7ad471bf210042f361094216e51ab4fa9b4b6";
        kubeadm = "bd3cbe40aff6c7b3b939243ebd80dbd7da207c0e594cfdd434295bf553ea7351";
        kubectl = "8efbb9435132a190920eb65a47a8c1ecf755ad85ab57a600c9bedbab460bb7a8";
      };
      "1.35.8" = {
        kubelet = "6971b9f95e54dbed67a2271abe6e78f8cc2894494649f3cf39e4b25a82dca923";
        kubeadm = "1bbc64a2be5b300880ae9330c6bba592ec2a2b8ecb79c527b0c7cc0f44070e5e";
        kubectl = "874d5e72dbb819f43cff16bcd1e4f8bac5b7f2361fe1e55049b0a6c676fb0cbf";
      };
    };
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

  # etcd release archives etcd-v<V>-linux-amd64.tar.gz
  etcd = {
    "3.5.23" = "8b50d62d38cb2de005b42227dd14b33f6e01758970f248f9257789ecfaf634c9";
    "3.5.33" = "5025b5b24d81a9616b6e284ccd439b9a3df055ef8fdcdc142af3ec8f6a3b3c95";
    "3.6.14" = "ffe840ff9295808e88cce2794a18a5ac87f12a5203c8314d0bf6aa119b41bac5";
  };

  # containerd release archives containerd-<V>-linux-amd64.tar.gz
  containerd = {
    default = "2.1.4";
    releases = {
      "1.7.28" = "7a8c262deb63becc877e82d23749e4f99f4a17e8e660f9b8c257ca87a5c056b6";
      "2.1.4" = "316d510a0428276d931023f72c09fdff1a6ba81d6cc36f31805fea6a3c88f515";
      "2.3.4" = "9d68969855fbf676cdb8ed758e420fb048d61f984f61de3e53eddfebe484d168";
    };
  };

  runc = {
    default = "1.3.2";
    releases = {
      "1.3.2" = "e7a8e30bd6d248f494aae9163521ff4eb112a30602ac56ada0871e3531269c2d";
      "1.4.3" = "f6ae8efc0fa40079e1475e97cbe9d1bd3f106a28d6af78a11d9f1bd565515e60";
    };
  };

  # crictl archives crictl-v<V>-linux-amd64.tar.gz
  crictl = {
    "1.31.1" = "0a03ba6b1e4c253d63627f8d210b2ea07675a8712587e697657b236d06d7d231";
    "1.32.0" = "f050b71d3a73a91a4e0990b90143ed04dcd100cc66f953736fcb6a2730e283c4";
    "1.33.0" = "8307399e714626e69d1213a4cd18c8dec3d0201ecdac009b1802115df8973f0f";
    "1.34.0" = "a8ff2a3edb37a98daf3aba7c3b284fe0aa5bff24166d896ab9ef64c8913c9f51";
    "1.35.0" = "2e141e5b22cb189c40365a11807d69b76b9b3caced89fac2f4ec879408ce2177";
  };

  # CNI reference plugins cni-plugins-linux-amd64-v<V>.tgz
  cni = {
    default = "1.8.0";
    releases = {
      "1.8.0" = "ab3bda535f9d90766cccc90d3dddb5482003dd744d7f22bcf98186bf8eea8be6";
      "1.9.1" = "b98f74a0f8522f0a83867178729c1aa70f2158f90c45a2ca8fa791db1c76b303";
    };
    # The plugin binaries placed in /opt/cni/bin (members of the archive).
    plugins = [ "bandwidth" "bridge" "dhcp" "dummy" "firewall" "host-device" "host-local" "ipvlan"
      "loopback" "macvlan" "portmap" "ptp" "sbr" "static" "tap" "tuning" "vlan" "vrf" ];
  };

  calico = {
    default = "3.30.3";
    releases = {
      "3.30.3" = {
        calicoctl = "a7d017d1abf6ef5d6e03267187c0dd68c32f5e937b64decd29d003be44fa6b94";
        crds = "f813232c182229da17658f59db511acb3997e51973eeb293b57ac0dbb5ccf791";
      };
      "3.31.7" = {
        calicoctl = "1b91928adc39861ba5e04d8d15c4ce489731269b07a8e7444c0fdf677f041113";
        crds = "1d6d5e523f92ee1e8227a48c016229c668f94035431b82f19139affeb45dbeff";
      };
    };
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
    kube = { dlK8sIo, version, component }: "${dlK8sIo}/release/v${version}/bin/linux/${arch}/${component}";
    etcd = { github, version }: "${github}/etcd-io/etcd/releases/download/v${version}/etcd-v${version}-linux-${arch}.tar.gz";
    containerd = { github, version }: "${github}/containerd/containerd/releases/download/v${version}/containerd-${version}-linux-${arch}.tar.gz";
    runc = { github, version }: "${github}/opencontainers/runc/releases/download/v${version}/runc.${arch}";
    crictl = { github, version }: "${github}/kubernetes-sigs/cri-tools/releases/download/v${version}/crictl-v${version}-linux-${arch}.tar.gz";
    cni = { github, version }: "${github}/containernetworking/plugins/releases/download/v${version}/cni-plugins-linux-${arch}-v${version}.tgz";
    calicoctl = { github, version }: "${github}/projectcalico/calico/releases/download/v${version}/calicoctl-linux-${arch}";
    calicoCrds = { github, version }: "${github}/projectcalico/calico/raw/v${version}/manifests/crds.yaml";
  };
}
