# Binary components: where each comes from (a pinned URL + sha256 from versions.nix, an
# archive member, or a local file of the deployer), where it goes on the node, and which
# phase consumes it. Phases call `files` to get the file records of a component.
let
  versions = import ./versions.nix;
  lib = import ./lib;
  inherit (lib) errors records;
  inherit (builtins) concatMap elem map hasAttr;

  # consumer: the phase that needs the binary (used to leave out downloads for
  # generate-only phases). Archive members are named as in the upstream archives.
  specs = {
    kubelet = { consumer = "kubelet"; };
    kubeadm = { consumer = "kubelet"; };
    kubectl = { consumer = "control-plane"; };
    etcd = { consumer = "etcd"; };
    etcdctl = { consumer = "etcd"; };
    containerd = { consumer = "container-runtime"; };
    "containerd-shim-runc-v2" = { consumer = "container-runtime"; };
    ctr = { consumer = "container-runtime"; };
    runc = { consumer = "container-runtime"; };
    crictl = { consumer = "container-runtime"; };
    "cni-plugins" = { consumer = "cni"; };
    calicoctl = { consumer = "cni"; };
  };

  componentNames = builtins.attrNames specs;

  pinned = what: version: table: hint:
    if hasAttr version table then table.${version}
    else errors.fail "${what} ${version} has no pinned sha256 in stdlib/versions.nix (pinned: ${builtins.concatStringsSep ", " (builtins.attrNames table)}). ${hint}";
in
{
  inherit componentNames specs;

  consumerOf = name: specs.${name}.consumer;

  # File records placing component `name` on a node.
  #   s: the node's resolved settings; v: resolved versions { kube; etcd; crictl; ... }
  files = s: v: name:
    let
      bin = s.paths.binDir;
      local = s.download.local;
      gh = s.download.githubUrl;
      hint = "Pin it there, or set download.local.${name} to a file on the deployer.";
      exe = path: src: records.file ({ inherit path; mode = "0755"; } // src);
      fromLocal = path: exe path { local = local.${name}; };
      art = a: { artifact = records.artifact a; };

      kube = component:
        let sums = pinned "Kubernetes" v.kube versions.kubernetes.releases hint; in
        art {
          name = "${component}-${v.kube}-linux-${versions.arch}";
          url = versions.urls.kube { dlK8sIo = s.download.dlK8sIoUrl; version = v.kube; inherit component; };
          sha256 = sums.${component};
        };
      etcdArchive = member: art {
        name = "etcd-v${v.etcd}-linux-${versions.arch}.tar.gz";
        url = versions.urls.etcd { github = gh; version = v.etcd; };
        sha256 = pinned "etcd" v.etcd versions.etcd hint;
        member = "etcd-v${v.etcd}-linux-${versions.arch}/${member}";
      };
      containerdArchive = member: art {
        name = "containerd-${v.containerd}-linux-${versions.arch}.tar.gz";
        url = versions.urls.containerd { github = gh; version = v.containerd; };
        sha256 = pinned "containerd" v.containerd versions.containerd.releases hint;
        member = "bin/${member}";
      };
      cniPlugin = p: art {
        name = "cni-plugins-linux-${versions.arch}-v${v.cni}.tgz";
        url = versions.urls.cni { github = gh; version = v.cni; };
        sha256 = pinned "cni-plugins" v.cni versions.cni.releases hint;
        member = "./${p}";
      };

      dest = {
        kubelet = "${bin}/kubelet";
        kubeadm = "${bin}/kubeadm";
        kubectl = "${bin}/kubectl";
        etcd = "${bin}/etcd";
        etcdctl = "${bin}/etcdctl";
        containerd = "${bin}/containerd";
        "containerd-shim-runc-v2" = "${bin}/containerd-shim-runc-v2";
        ctr = "${bin}/ctr";
        runc = "${bin}/runc";
        crictl = "${bin}/crictl";
        calicoctl = "${bin}/calicoctl";
      };

      remote = {
        kubelet = [ (exe "${bin}/kubelet" (kube "kubelet")) ];
        kubeadm = [ (exe "${bin}/kubeadm" (kube "kubeadm")) ];
        kubectl = [ (exe "${bin}/kubectl" (kube "kubectl")) ];
        etcd = [ (exe "${bin}/etcd" (etcdArchive "etcd")) ];
        etcdctl = [ (exe "${bin}/etcdctl" (etcdArchive "etcdctl")) ];
        containerd = [ (exe "${bin}/containerd" (containerdArchive "containerd")) ];
        "containerd-shim-runc-v2" = [ (exe "${bin}/containerd-shim-runc-v2" (containerdArchive "containerd-shim-runc-v2")) ];
        ctr = [ (exe "${bin}/ctr" (containerdArchive "ctr")) ];
        runc = [
          (exe "${bin}/runc" (art {
            name = "runc-${v.runc}.${versions.arch}";
            url = versions.urls.runc { github = gh; version = v.runc; };
            sha256 = pinned "runc" v.runc versions.runc.releases hint;
          }))
        ];
        crictl = [
          (exe "${bin}/crictl" (art {
            name = "crictl-v${v.crictl}-linux-${versions.arch}.tar.gz";
            url = versions.urls.crictl { github = gh; version = v.crictl; };
            sha256 = pinned "crictl" v.crictl versions.crictl hint;
            member = "crictl";
          }))
        ];
        "cni-plugins" = map (p: exe "/opt/cni/bin/${p}" (cniPlugin p)) versions.cni.plugins;
        calicoctl = [
          (exe "${bin}/calicoctl" (art {
            name = "calicoctl-${v.calico}-linux-${versions.arch}";
            url = versions.urls.calicoctl { github = gh; version = v.calico; };
            sha256 = (pinned "calico" v.calico versions.calico.releases "Pin it there.").calicoctl;
          }))
        ];
      };

      # A local cni-plugins entry is a directory holding the plugin binaries.
      localFiles =
        if name == "cni-plugins"
        then map (p: exe "/opt/cni/bin/${p}" { local = "${local.${name}}/${p}"; }) versions.cni.plugins
        else [ (fromLocal dest.${name}) ];
    in
    if elem name s.download.skip then [ ]
    else if hasAttr name local then localFiles
    else remote.${name};
}
