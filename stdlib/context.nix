# The cluster context: everything phases need that is computed once per cluster
# (node lists in order, control planes, etcd members, networks, API endpoints, image
# references, pinned versions, shared texts such as /etc/hosts), so a 1000-node cluster
# pays for each of these once, not per node.
{ name, settings, nodes }:
# settings: resolved cluster-wide settings; nodes: list of node records in order
let
  lib = import ./lib;
  versions = import ./versions.nix;
  inherit (lib) ip text;
  inherit (builtins) filter map head length elem concatStringsSep hasAttr listToAttrs;
  s = settings;

  kube = s.kubernetes.version;
  minor = lib.version.majorMinor kube;
  companions = versions.kubernetes.minors.${minor} or null;
  companion = key:
    if companions == null then lib.errors.fail "Kubernetes ${kube}: no companion versions (etcd, CoreDNS, pause, crictl) are pinned for ${minor} in stdlib/versions.nix"
    else companions.${key};

  controlPlanes = filter (n: n.isControlPlane) nodes;
  etcdNodes =
    if s.etcd.deploymentType == "kubeadm" then [ ]
    else filter (n: n.isEtcd) nodes;
  k8sNodes = filter (n: n.isK8s) nodes;
  # The anchor: kubeadm.initNode when set (validate.nix checks it is a control plane).
  initNode = s.kubeadm.initNode;
  named = filter (n: n.name == initNode) controlPlanes;
  first =
    if initNode != null && named != [ ] then head named
    else if controlPlanes == [ ] then null
    else head controlPlanes;

  pod = ip.parseCidr s.network.podCIDR;
  service = ip.parseCidr s.network.serviceCIDR;

  scheme = if s.etcd.tls then "https" else "http";

  apiPort = s.apiserver.port;
  lbPort = if s.loadBalancer.port == null then apiPort else s.loadBalancer.port;
  external = s.loadBalancer.externalAddress;
  externalPort = if s.loadBalancer.externalPort == null then apiPort else s.loadBalancer.externalPort;
  localLB = external == null && s.loadBalancer.localhost;

  kubeRepo = s.kubernetes.imageRepo;
  quay = s.download.quayImageRepo;
  docker = s.download.dockerImageRepo;
  calicoVersion = s.calico.version;
  tags = versions.images; # (inside `rec` below, `versions` means the resolved versions)

  etcHostsText =
    text.lines ([
      "# Managed by kdeploy (preinstall.manageEtcHosts)."
      "127.0.0.1 localhost localhost.localdomain"
      "::1 localhost ip6-localhost ip6-loopback"
      "ff02::1 ip6-allnodes"
      "ff02::2 ip6-allrouters"
    ]
    ++ s.preinstall.etcHostsExtra
    ++ [ "# cluster nodes" ]
    ++ map (n: "${n.address} ${n.name}.${s.dns.domain} ${n.name}") nodes);
in
rec {
  inherit name settings nodes controlPlanes etcdNodes k8sNodes;
  firstControlPlane = first;
  byName = listToAttrs (map (n: { name = n.name; value = n; }) nodes);

  versions = {
    inherit kube minor;
    etcd = if s.etcd.version != null then s.etcd.version else companion "etcd";
    coredns = if s.dns.coredns.version != null then s.dns.coredns.version else companion "coredns";
    pause = if s.kubernetes.podInfraVersion != null then s.kubernetes.podInfraVersion else companion "pause";
    defaultCrictl = companion "crictl";
    calico = calicoVersion;
    cni = s.cni.version;
  };

  active = phase: !(elem phase s.kdeploy.generateOnly);

  # Seconds a node waits for the deployer to confirm a switch of `phase` before it
  # moves the phase back by itself, or null (kdeploy.selfRollback). By default the
  # phases that can cut the deployer off: preinstall (sysctl, /etc/hosts, your
  # files), cni (routes, iptables), resolvconf, and every phase of your own.
  selfRollback = phase:
    let
      r = s.kdeploy.selfRollback;
      ours = elem phase (import ./phases/order.nix).order;
      guarded =
        if r.phases != null then elem phase r.phases
        else !ours || elem phase [ "preinstall" "cni" "resolvconf" ];
    in
    if r.enable && guarded && active phase then r.deadline else null;

  net = rec {
    inherit pod service;
    nodePrefix = s.network.nodePrefix;
    apiserverServiceIP = ip.nth service 1;
    dnsIP = ip.nth service 3;
    dnsIP2 = ip.nth service 4;
  };

  # The DNS servers pods and nodes use (Kubespray's kubelet clusterDNS rules).
  clusterDNS =
    if s.dns.nodelocaldns.enable && s.dns.mode != "none" then [ s.dns.nodelocaldns.ip ]
    else if s.dns.mode == "coredns" then [ net.dnsIP ]
    else if s.dns.mode == "coredns_dual" then [ net.dnsIP net.dnsIP2 ]
    else if s.dns.mode == "manual" then [ s.dns.manualServer ]
    else [ ];

  etcd = rec {
    inherit scheme;
    members = map (n: { inherit (n) name address; memberName = n.etcdMemberName; }) etcdNodes;
    clientURL = address: "${scheme}://${address}:2379";
    peerURL = address: "${scheme}://${address}:2380";
    endpoints = map (m: clientURL m.address) members;
    initialCluster = concatStringsSep "," (map (m: "${m.memberName}=${peerURL m.address}") members);
    certDir = "/etc/ssl/etcd/ssl";
  };

  api = {
    port = apiPort;
    inherit lbPort localLB;
    # What kubelets and kube-proxy outside the control plane talk to.
    endpointForWorkers =
      if external != null then "https://${external}:${toString externalPort}"
      else if localLB then "https://localhost:${toString lbPort}"
      else "https://${first.address}:${toString apiPort}";
    # kubeadm controlPlaneEndpoint / join discovery address.
    controlPlaneEndpoint =
      if external != null then "${external}:${toString externalPort}"
      else "${first.address}:${toString apiPort}";
    sans = text.unique ([
      "kubernetes" "kubernetes.default" "kubernetes.default.svc" "kubernetes.default.svc.${s.dns.domain}"
      net.apiserverServiceIP "localhost" "127.0.0.1"
    ]
    ++ builtins.concatMap (n: [ n.name n.address ]) controlPlanes
    ++ (if external != null then [ external ] else [ ])
    ++ s.apiserver.extraSANs);
  };

  images = {
    pause = "${kubeRepo}/pause:${versions.pause}";
    coredns = "${kubeRepo}/coredns/coredns:v${versions.coredns}";
    nodelocaldns = "${kubeRepo}/dns/k8s-dns-node-cache:${tags.nodelocaldns}";
    dnsAutoscaler = "${kubeRepo}/cpa/cluster-proportional-autoscaler:${tags.dnsAutoscaler}";
    metricsServer = "${kubeRepo}/metrics-server/metrics-server:${tags.metricsServer}";
    nginx = "${docker}/library/nginx:${s.loadBalancer.nginxVersion}";
    haproxy = "${docker}/library/haproxy:${s.loadBalancer.haproxyVersion}";
    calicoNode = "${quay}/calico/node:v${calicoVersion}";
    calicoCni = "${quay}/calico/cni:v${calicoVersion}";
    calicoKubeControllers = "${quay}/calico/kube-controllers:v${calicoVersion}";
    flannel = "${docker}/flannel/flannel:${s.flannel.version}";
    flannelCniPlugin = "${docker}/flannel/flannel-cni-plugin:${s.flannel.cniVersion}";
    controlPlane = map (c: "${kubeRepo}/${c}:v${kube}") [ "kube-apiserver" "kube-controller-manager" "kube-scheduler" ];
    kubeProxy = "${kubeRepo}/kube-proxy:v${kube}";
  };

  # Texts shared by many nodes: computed once here, referenced by every closure.
  texts =
    let
      lb = import ./templates/loadbalancer.nix;
      lbCtx = { inherit settings controlPlanes api images; };
      kind = s.loadBalancer.type;
      lbConfig = if kind == "nginx" then lb.nginxConf { ctx = lbCtx; } else lb.haproxyCfg { ctx = lbCtx; };
    in
    {
      etcHosts = etcHostsText;
      inherit lbConfig;
      lbManifest = lb.manifest { ctx = lbCtx; inherit kind; config = lbConfig; };
    };
}
