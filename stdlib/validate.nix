# Whole-cluster validation rules, evaluated before any closure is built. Each rule
# throws one clear error naming the rule and pointing (FILE:LINE:COL) at the user's
# definition; `warnings` lists things that are allowed but worth saying.
{ args, ctx, nodeList, userSettings }:
let
  lib = import ./lib;
  versions = import ./versions.nix;
  artifacts = import ./artifacts.nix;
  checksums = import ./checksums.nix;
  inherit (lib) errors ip text;
  inherit (builtins) filter map head length elem concatStringsSep attrNames attrValues groupBy
    toJSON all any foldl' match stringLength hasAttr;
  fmtPos = errors.fmtPos;
  s = ctx.settings;

  # Position of a user setting (e.g. [ "network" "podCIDR" ]) in `settings`, looking
  # through kd.mkForce/mkDefault wrappers; falls back to `settings`, then `nodes`.
  settingPos = path:
    let found = errors.posIn userSettings path; in
    if found != null then found
    else if args ? settings then builtins.unsafeGetAttrPos "settings" args
    else builtins.unsafeGetAttrPos "nodes" args;

  nodesPos = builtins.unsafeGetAttrPos "nodes" args;
  rule = title: msg: pos: errors.fail "${title}: ${msg} (at ${fmtPos pos})";
  names = ns: concatStringsSep ", " (map (n: n.name) ns);
  # An attribute name as an attribute path shows it (quoted unless plain).
  attrName = k: if match "[A-Za-z_][-A-Za-z0-9_']*" k != null then k else toJSON k;

  dns1123 = n: stringLength n <= 63 && match "[a-z0-9]([-a-z0-9]*[a-z0-9])?" n != null;

  etcdRoleNodes = filter (n: n.isEtcd) nodeList;
  kubeadmEtcd = s.etcd.deploymentType == "kubeadm";
  etcdCount = if kubeadmEtcd then length ctx.controlPlanes else length etcdRoleNodes;

  pod = ctx.net.pod;
  svc = ctx.net.service;
  nodeNet = if s.network.nodeCIDR == null then null else ip.parseCidr s.network.nodeCIDR;

  kubeVersion = s.kubernetes.version;
  # a checksum for component c at version v on architecture a: the cluster's
  # download.checksums, else checksums.nix (no_arch: one file for all)
  hasSum = a: v: c: any (t: hasAttr v ((t.${c} or { }).${a} or (t.${c} or { }).no_arch or { })) [ s.download.checksums checksums ];
  # the components of `cs` that are downloaded (not local files, not skipped)
  downloaded = cs: filter (c: !(hasAttr c s.download.local || elem c s.download.skip)) cs;
  # The first architecture among `nodes` lacking a checksum of some of `components` at
  # `v`: { arch; node; missing; }, or null.
  missingSums = nodes: v: components:
    let
      byArch = groupBy (n: n.settings.arch) nodes;
      gaps = map (a: { arch = a; node = head byArch.${a}; missing = filter (c: !(hasSum a v c)) components; }) (attrNames byArch);
      found = filter (g: g.missing != [ ]) gaps;
    in
    if found == [ ] then null else head found;
  # "... has no checksum of X for ARCH (node N; known: ...); set download.checksums.X.ARCH."V" ..."
  sumsMessage = v: m:
    let
      c = head m.missing;
      key = if c == "calico-crds" then "no_arch" else m.arch;
      more = if length m.missing > 1 then " (and ${concatStringsSep ", " (builtins.tail m.missing)})" else "";
    in
    "${v} has no checksum of ${concatStringsSep ", " m.missing} for ${m.arch} (node ${m.node.name}; known: ${artifacts.known c m.arch v}); set download.checksums.${c}.${key}.\"${v}\"${more} = \"sha256:<hex>\"";
  firstControlPlane = if ctx.firstControlPlane == null then [ ] else [ ctx.firstControlPlane ];
  kubeGap = missingSums (filter (n: n.isK8s) nodeList) kubeVersion (downloaded [ "kubelet" "kubeadm" "kubectl" ]);
  # calicoctl goes to the control planes, the CRDs (one file) to the first of them
  calicoGap =
    let cp = missingSums ctx.controlPlanes s.calico.version (downloaded [ "calicoctl" ]); in
    if cp != null then cp else missingSums firstControlPlane s.calico.version [ "calico-crds" ];

  dupGroups = filter (g: length g > 1) (attrValues (groupBy (n: n.address) nodeList));

  calico = s.network.plugin == "calico";
  perNodeCIDR = !calico && s.network.plugin != "none";
  blockPrefix = if calico then s.calico.poolBlockSize else s.network.nodePrefix;
  blockWhat = if calico then "calico.poolBlockSize" else "network.nodePrefix";
  blockPath = if calico then [ "calico" "poolBlockSize" ] else [ "network" "nodePrefix" ];

  maxPodsFit = n: n.settings.kubelet.maxPods <= ip.pow2 (32 - s.network.nodePrefix) - 2;

  rules = [
    # node names
    (let bad = filter (n: !(dns1123 n.name)) nodeList; in
      if bad == [ ] then true
      else rule "invalid node name" "'${(head bad).name}' is not a DNS-1123 label (lower-case letters, digits and '-', starting and ending alphanumeric, at most 63 characters)" (head bad).pos)

    # duplicate addresses
    (if dupGroups == [ ] then true
      else let g = head dupGroups; second = builtins.elemAt g 1; in
      rule "duplicate address" "${second.address} is used by ${names g}" second.addressPos)

    # control plane
    (if ctx.controlPlanes != [ ] then true
      else rule "no control plane" "no node has the role \"control-plane\"; give it to 1 (or 3 for HA) nodes" nodesPos)

    # etcd presence and quorum
    (if kubeadmEtcd || etcdRoleNodes != [ ] then true
      else rule "no etcd node" "no node has the role \"etcd\"; give it to 1 or 3 nodes, or set etcd.deploymentType = \"kubeadm\" to run etcd on the control planes" nodesPos)
    (if !kubeadmEtcd || etcdRoleNodes == [ ] then true
      else rule "etcd role unused" "etcd.deploymentType is \"kubeadm\" (etcd runs on the control planes) but ${names etcdRoleNodes} have the role \"etcd\"; remove the role or use deploymentType \"host\"" (settingPos [ "etcd" "deploymentType" ]))
    (if s.etcd.caDir == null || text.hasPrefix "/" s.etcd.caDir then true
      else rule "etcd CA directory not absolute" "etcd.caDir = ${toJSON s.etcd.caDir}: give an absolute directory on the deployer, or a Nix path such as ./pki (a path relative to nothing cannot be found again)" (settingPos [ "etcd" "caDir" ]))
    (if s.etcd.caDir == null || s.etcd.certDir == null then true
      else rule "two sources of etcd certificates" "etcd.caDir (your CA, kdeploy issues the certificates) and etcd.certDir (your certificates) are both set; keep one" (settingPos [ "etcd" "caDir" ]))
    (if s.kubeadm.initNode == null || builtins.any (n: n.name == s.kubeadm.initNode) ctx.controlPlanes then true
      else rule "kubeadm.initNode is not a control plane" "kubeadm.initNode = ${toJSON s.kubeadm.initNode}, but the control planes are ${names ctx.controlPlanes}" (settingPos [ "kubeadm" "initNode" ]))
    (if etcdCount == 0 || etcdCount - (etcdCount / 2) * 2 == 1 then true
      else rule "even number of etcd members"
        "etcd needs an odd number of members to keep quorum, but ${toString etcdCount} would run (${names (if kubeadmEtcd then ctx.controlPlanes else etcdRoleNodes)}); use ${toString (etcdCount - 1)} or ${toString (etcdCount + 1)}"
        nodesPos)

    # networks
    (if !(ip.overlaps pod svc) then true
      else rule "overlapping networks" "pod network ${s.network.podCIDR} overlaps service network ${s.network.serviceCIDR}" (settingPos [ "network" "podCIDR" ]))
    (if nodeNet == null || !(ip.overlaps nodeNet pod) then true
      else rule "overlapping networks" "node network ${s.network.nodeCIDR} overlaps pod network ${s.network.podCIDR}" (settingPos [ "network" "nodeCIDR" ]))
    (if nodeNet == null || !(ip.overlaps nodeNet svc) then true
      else rule "overlapping networks" "node network ${s.network.nodeCIDR} overlaps service network ${s.network.serviceCIDR}" (settingPos [ "network" "nodeCIDR" ]))
    (let inside = filter (n: let a = ip.parse n.address; in ip.contains pod a || ip.contains svc a) nodeList; in
      if inside == [ ] then true
      else let n = head inside; in
      rule "overlapping networks" "node ${n.name}'s address ${n.address} lies inside the ${if ip.contains pod (ip.parse n.address) then "pod network ${s.network.podCIDR}" else "service network ${s.network.serviceCIDR}"}" n.addressPos)

    # pod network size: every Kubernetes node needs its own block of the pod network
    # (calico: an IPAM block of calico.poolBlockSize; others: network.nodePrefix, the
    # node's podCIDR). As in Kubespray, maxPods is only checked against a per-node prefix.
    (if blockPrefix >= pod.prefix then true
      else rule "pod network too small" "${blockWhat} /${toString blockPrefix} is larger than the whole pod network ${s.network.podCIDR}" (settingPos blockPath))
    (let cap = ip.subnetCount pod blockPrefix; count = length ctx.k8sNodes; in
      if count <= cap then true
      else rule "pod network too small"
        "${s.network.podCIDR} holds ${toString cap} blocks of /${toString blockPrefix} (${blockWhat}) but the cluster has ${toString count} Kubernetes nodes; use a larger network.podCIDR or a longer ${blockWhat}"
        (settingPos [ "network" "podCIDR" ]))
    (let bad = filter (n: n.isK8s && !(maxPodsFit n)) nodeList; in
      if !perNodeCIDR || bad == [ ] then true
      else let n = head bad; in
      rule "pod network too small" "node ${n.name}: kubelet.maxPods ${toString n.settings.kubelet.maxPods} does not fit a /${toString s.network.nodePrefix} pod block (at most ${toString (ip.pow2 (32 - s.network.nodePrefix) - 2)})" n.pos)

    # Kubernetes version
    (if lib.version.atLeast kubeVersion versions.kubernetes.minimum then true
      else rule "unsupported Kubernetes version" "${kubeVersion} is below the supported minimum ${versions.kubernetes.minimum}" (settingPos [ "kubernetes" "version" ]))
    (if kubeGap == null then true
      else rule "unsupported Kubernetes version" (sumsMessage kubeVersion kubeGap) (settingPos [ "kubernetes" "version" ]))
    (if hasAttr ctx.versions.minor versions.kubernetes.minors then true
      else rule "unsupported Kubernetes version" "no companion versions (etcd, CoreDNS, pause) are pinned for Kubernetes ${ctx.versions.minor}" (settingPos [ "kubernetes" "version" ]))

    # calico version pinned (CRDs are downloaded with a checksum)
    (if s.network.plugin != "calico" || calicoGap == null then true
      else rule "unsupported calico version" (sumsMessage s.calico.version calicoGap) (settingPos [ "calico" "version" ]))

    # DNS
    (if s.dns.mode != "manual" || s.dns.manualServer != null then true
      else rule "manual DNS without server" "dns.mode is \"manual\" but dns.manualServer is not set" (settingPos [ "dns" "mode" ]))

    # download.local keys
    (let bad = filter (k: !(elem k artifacts.componentNames)) (attrNames s.download.local); in
      if bad == [ ] then true
      else rule "unknown component" "download.local.${attrName (head bad)} is not a component.${errors.didYouMean (head bad) artifacts.componentNames} Components: ${concatStringsSep ", " artifacts.componentNames}" (settingPos [ "download" "local" (head bad) ]))

    # runtime settings that must agree
    (let bad = filter (n: n.isK8s && (n.settings.kubelet.cgroupDriver == "systemd") != n.settings.containerd.systemdCgroup) nodeList; in
      if bad == [ ] then true
      else rule "cgroup driver mismatch" "node ${(head bad).name}: kubelet.cgroupDriver is ${(head bad).settings.kubelet.cgroupDriver} but containerd.systemdCgroup is ${text.boolStr (head bad).settings.containerd.systemdCgroup}" (head bad).pos)
  ];

  warnings =
    (if !s.etcd.tls && !kubeadmEtcd then [ "etcd.tls is false: etcd peer and client traffic is plain HTTP and unauthenticated: anyone who reaches port 2379 reads and writes every Kubernetes Secret." ] else [ ])
    ++ (if s.kdeploy.generateOnly != [ ] then [ "phases generated but not activated: ${concatStringsSep ", " s.kdeploy.generateOnly}." ] else [ ]);
in
{
  ok = foldl' (acc: r: builtins.seq r acc) true rules;
  inherit warnings;
}
