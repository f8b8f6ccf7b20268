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

  # The sha256 of `component` at `version`: the cluster's download.checksums first
  # (Kubespray's shape: component -> arch -> version), then the table in versions.nix.
  checksum = s: component: version: table: hint:
    let
      given = ((s.download.checksums.${component} or { }).${versions.arch} or { }).${version} or null;
    in
    if given != null then builtins.substring 7 64 given
    else if hasAttr version table then table.${version}
    else errors.fail "${component} ${version} (${versions.arch}) has no sha256 (pinned: ${builtins.concatStringsSep ", " (builtins.attrNames table)}): set download.checksums.${component}.${versions.arch}.\"${version}\" = \"sha256:<hex>\"${hint}";

  # download.filesRepo: every URL becomes <filesRepo>/<host>/<path> (Kubespray's files_repo
  # layout, as its offline guide mirrors the upstream URLs).
  mirror = s: url:
    let rest = builtins.match "[a-z]+://(.*)" url; in
    if s.download.filesRepo == null || rest == null then url else "${s.download.filesRepo}/${builtins.head rest}";

  # An artifact record of `component` at `version` from `table` (version -> sha256).
  artifact = s: { component, version, table, name, url, member ? null, hint ? "" }:
    records.artifact { inherit name member; url = mirror s url; sha256 = checksum s component version table hint; };
in
{
  inherit componentNames specs artifact;

  consumerOf = name: specs.${name}.consumer;

  # File records placing component `name` on a node.
  #   s: the node's resolved settings; v: resolved versions { kube; etcd; crictl; ... }
  files = s: v: name:
    let
      bin = s.paths.binDir;
      local = s.download.local;
      gh = s.download.githubUrl;
      hint = ", or download.local.${name} to a file on the deployer";
      exe = path: src: records.file ({ inherit path; mode = "0755"; } // src);
      fromLocal = path: exe path { local = local.${name}; };
      art = a: { artifact = artifact s (a // { inherit hint; }); };
      kubeTable = component: builtins.mapAttrs (_: r: r.${component}) versions.kubernetes.releases;

      kube = component: art {
        inherit component;
        version = v.kube;
        table = kubeTable component;
        name = "${component}-${v.kube}-linux-${versions.arch}";
        url = versions.urls.kube { dlK8sIo = s.download.dlK8sIoUrl; version = v.kube; inherit component; };
      };
      etcdArchive = member: art {
        component = "etcd";
        version = v.etcd;
        table = versions.etcd;
        name = "etcd-v${v.etcd}-linux-${versions.arch}.tar.gz";
        url = versions.urls.etcd { github = gh; version = v.etcd; };
        member = "etcd-v${v.etcd}-linux-${versions.arch}/${member}";
      };
      containerdArchive = member: art {
        component = "containerd";
        version = v.containerd;
        table = versions.containerd.releases;
        name = "containerd-${v.containerd}-linux-${versions.arch}.tar.gz";
        url = versions.urls.containerd { github = gh; version = v.containerd; };
        member = "bin/${member}";
      };
      cniPlugin = p: art {
        component = "cni-plugins";
        version = v.cni;
        table = versions.cni.releases;
        name = "cni-plugins-linux-${versions.arch}-v${v.cni}.tgz";
        url = versions.urls.cni { github = gh; version = v.cni; };
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
            component = "runc";
            version = v.runc;
            table = versions.runc.releases;
            name = "runc-${v.runc}.${versions.arch}";
            url = versions.urls.runc { github = gh; version = v.runc; };
          }))
        ];
        crictl = [
          (exe "${bin}/crictl" (art {
            component = "crictl";
            version = v.crictl;
            table = versions.crictl;
            name = "crictl-v${v.crictl}-linux-${versions.arch}.tar.gz";
            url = versions.urls.crictl { github = gh; version = v.crictl; };
            member = "crictl";
          }))
        ];
        "cni-plugins" = map (p: exe "/opt/cni/bin/${p}" (cniPlugin p)) versions.cni.plugins;
        calicoctl = [
          (exe "${bin}/calicoctl" (art {
            component = "calicoctl";
            version = v.calico;
            table = builtins.mapAttrs (_: r: r.calicoctl) versions.calico.releases;
            name = "calicoctl-${v.calico}-linux-${versions.arch}";
            url = versions.urls.calicoctl { github = gh; version = v.calico; };
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
