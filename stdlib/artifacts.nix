# Binary components: where each comes from (a URL from versions.nix with its sha256 from
# checksums.nix for the node's architecture (setting `arch`), an
# archive member, or a local file of the deployer), where it goes on the node, and which
# phase consumes it. Phases call `files` to get the file records of a component.
let
  versions = import ./versions.nix;
  checksums = import ./checksums.nix;
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

  # The sha256 of `component` at `version` for `arch`: the cluster's download.checksums
  # first, then checksums.nix (both Kubespray's shape: component -> arch -> version).
  checksum = s: { component, version, arch, hint }:
    let
      # no_arch: one file for every architecture (Kubespray's calico CRDs)
      row = t: (t.${component} or { }).${arch} or (t.${component} or { }).no_arch or { };
      entry = t: (row t).${version} or null;
      found = let given = entry s.download.checksums; in if given != null then given else entry checksums;
    in
    if found != null then builtins.substring 7 64 found
    else errors.fail "${component} ${version} (${arch}) has no sha256 (known: ${known component arch version}): set download.checksums.${component}.${arch}.\"${version}\" = \"sha256:<hex>\"${hint}";

  # What the table knows near `version`, for errors: the versions of its minor, else the
  # oldest and newest.
  known = component: arch: version:
    let
      all = builtins.sort (a: b: builtins.compareVersions a b < 0)
        (builtins.attrNames ((checksums.${component} or { }).${arch} or (checksums.${component} or { }).no_arch or { }));
      near = builtins.filter (v: lib.version.majorMinor v == lib.version.majorMinor version) all;
      n = builtins.length all;
    in
    if near != [ ] then builtins.concatStringsSep ", " near
    else if n == 0 then "none"
    else "${builtins.head all} to ${builtins.elemAt all (n - 1)} in stdlib/checksums.nix";

  # download.filesRepo: every URL becomes <filesRepo>/<host>/<path> (Kubespray's files_repo
  # layout, as its offline guide mirrors the upstream URLs).
  mirror = s: url:
    let rest = builtins.match "[a-z]+://(.*)" url; in
    if s.download.filesRepo == null || rest == null then url else "${s.download.filesRepo}/${builtins.head rest}";

  # An artifact record of `component` at `version` for the node's architecture.
  artifact = s: { component, version, name, url, member ? null, hint ? "" }:
    records.artifact {
      inherit name member;
      url = mirror s url;
      sha256 = checksum s { inherit component version hint; arch = s.arch; };
    };
in
{
  inherit componentNames specs artifact known;

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
      arch = s.arch;

      kube = component: art {
        inherit component;
        version = v.kube;
        name = "${component}-${v.kube}-linux-${arch}";
        url = versions.urls.kube { dlK8sIo = s.download.dlK8sIoUrl; version = v.kube; inherit component arch; };
      };
      etcdArchive = member: art {
        component = "etcd";
        version = v.etcd;
        name = "etcd-v${v.etcd}-linux-${arch}.tar.gz";
        url = versions.urls.etcd { github = gh; version = v.etcd; inherit arch; };
        member = "etcd-v${v.etcd}-linux-${arch}/${member}";
      };
      containerdArchive = member: art {
        component = "containerd";
        version = v.containerd;
        name = "containerd-${v.containerd}-linux-${arch}.tar.gz";
        url = versions.urls.containerd { github = gh; version = v.containerd; inherit arch; };
        member = "bin/${member}";
      };
      cniPlugin = p: art {
        component = "cni-plugins";
        version = v.cni;
        name = "cni-plugins-linux-${arch}-v${v.cni}.tgz";
        url = versions.urls.cni { github = gh; version = v.cni; inherit arch; };
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
            name = "runc-${v.runc}.${arch}";
            url = versions.urls.runc { github = gh; version = v.runc; inherit arch; };
          }))
        ];
        crictl = [
          (exe "${bin}/crictl" (art {
            component = "crictl";
            version = v.crictl;
            name = "crictl-v${v.crictl}-linux-${arch}.tar.gz";
            url = versions.urls.crictl { github = gh; version = v.crictl; inherit arch; };
            member = "crictl";
          }))
        ];
        "cni-plugins" = map (p: exe "/opt/cni/bin/${p}" (cniPlugin p)) versions.cni.plugins;
        calicoctl = [
          (exe "${bin}/calicoctl" (art {
            component = "calicoctl";
            version = v.calico;
            name = "calicoctl-${v.calico}-linux-${arch}";
            url = versions.urls.calicoctl { github = gh; version = v.calico; inherit arch; };
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
