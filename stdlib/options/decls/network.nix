# Options of the cluster network: plugin choice, pod/service/node address plans and
# the calico and flannel plugins (Kubespray's kube_network_plugin, kube_pods_subnet,
# network_plugin/calico_defaults and network_plugin/flannel defaults).
{ opt, t, versions, ... }:
{
  network = {
    plugin = opt {
      type = t.enum [ "calico" "flannel" "cni" "none" ]; default = "calico"; scope = "cluster";
      kubespray = "kube_network_plugin";
      description = "Pod network plugin. \"cni\": you install your own CNI; only the reference plugins are placed. \"none\": no CNI at all.";
    };
    podCIDR = opt {
      type = t.cidr; default = "10.233.64.0/18"; scope = "cluster"; kubespray = "kube_pods_subnet";
      description = "Pod network; must not overlap the service or node network.";
    };
    serviceCIDR = opt {
      type = t.cidr; default = "10.233.0.0/18"; scope = "cluster"; kubespray = "kube_service_addresses";
      description = "Service network. Its first address is the kubernetes service, the third the cluster DNS.";
    };
    nodePrefix = opt {
      type = t.prefixLength; default = 24; scope = "cluster"; kubespray = "kube_network_node_prefix";
      description = "Prefix length of each node's podCIDR (kube-controller-manager --node-cidr-mask-size) for flannel and other plugins using node CIDRs; the pod network must hold one per Kubernetes node and kubelet.maxPods must fit in one. Calico ignores it and allocates calico.poolBlockSize blocks itself.";
    };
    nodeCIDR = opt {
      type = t.nullOr t.cidr; default = null; scope = "cluster";
      description = "The network the node addresses live in (optional). When set, it is checked against the pod and service networks; node addresses are always checked.";
    };
  };

  calico = {
    version = opt {
      type = t.version; default = versions.calico.default; scope = "cluster"; kubespray = "calico_version";
      description = "Calico version (images, calicoctl, CRDs); needs checksums of calicoctl and calico-crds (stdlib/checksums.nix or download.checksums).";
    };
    backend = opt {
      type = t.enum [ "vxlan" "bird" "none" ]; default = "vxlan"; scope = "cluster"; kubespray = "calico_network_backend";
      description = "calico_backend: vxlan (no BGP), bird (BGP) or none (policy only).";
    };
    vxlanMode = opt {
      type = t.enum [ "Always" "Never" "CrossSubnet" ]; default = "Always"; scope = "cluster"; kubespray = "calico_vxlan_mode";
      description = "VXLAN mode of the default IPv4 pool.";
    };
    ipipMode = opt {
      type = t.enum [ "Always" "Never" "CrossSubnet" ]; default = "Never"; scope = "cluster"; kubespray = "calico_ipip_mode";
      description = "IP-in-IP mode of the default IPv4 pool.";
    };
    poolBlockSize = opt {
      type = t.intBetween 20 32; default = 26; scope = "cluster"; kubespray = "calico_pool_blocksize";
      description = "Block size of the default IPv4 pool (each node takes at least one block, so the pod network must hold one per Kubernetes node).";
    };
    natOutgoing = opt {
      type = t.bool; default = true; scope = "cluster"; kubespray = "nat_outgoing";
      description = "Masquerade traffic leaving the pod network.";
    };
    mtu = opt {
      type = t.nullOr (t.intBetween 576 9000); default = null; scope = "cluster"; kubespray = "calico_mtu";
      description = "MTU of pod interfaces and tunnels (null: calico detects it).";
    };
    vxlanVni = opt {
      type = t.int; default = 4096; scope = "cluster"; kubespray = "calico_vxlan_vni";
      description = "VXLAN VNI used by felix.";
    };
    vxlanPort = opt {
      type = t.port; default = 4789; scope = "cluster"; kubespray = "calico_vxlan_port";
      description = "VXLAN UDP port used by felix.";
    };
    logLevel = opt {
      type = t.enum [ "debug" "info" "warning" "error" "fatal" ]; default = "info"; scope = "cluster"; kubespray = "calico_loglevel";
      description = "Felix log level.";
    };
    iptablesBackend = opt {
      type = t.enum [ "Auto" "Legacy" "NFT" ]; default = "Auto"; scope = "cluster"; kubespray = "calico_iptables_backend";
      description = "FELIX_IPTABLESBACKEND.";
    };
    ipAutodetectionMethod = opt {
      type = t.nullOr t.line; default = null; scope = "cluster"; kubespray = "calico_ip_auto_method";
      description = "IP_AUTODETECTION_METHOD of calico-node (null: can-reach the node's own address).";
    };
    nodeMemoryLimit = opt {
      type = t.quantity; default = "500M"; scope = "cluster"; kubespray = "calico_node_memory_limit";
      description = "Memory limit of calico-node.";
    };
    nodeCpuRequests = opt {
      type = t.quantity; default = "150m"; scope = "cluster"; kubespray = "calico_node_cpu_requests";
      description = "CPU request of calico-node.";
    };
  };

  flannel = {
    version = opt {
      type = t.imageTag; default = versions.images.flannel; scope = "cluster"; kubespray = "flannel_version";
      description = "Tag of the flannel image, <download.dockerImageRepo>/flannel/flannel.";
    };
    cniVersion = opt {
      type = t.imageTag; default = versions.images.flannelCniPlugin; scope = "cluster"; kubespray = "flannel_cni_version";
      description = "Tag of the flannel CNI plugin image, <download.dockerImageRepo>/flannel/flannel-cni-plugin.";
    };
    backend = opt {
      type = t.enum [ "vxlan" "host-gw" "wireguard" ]; default = "vxlan"; scope = "cluster"; kubespray = "flannel_backend_type";
      description = "Flannel backend.";
    };
    vxlanVni = opt {
      type = t.int; default = 1; scope = "cluster"; kubespray = "flannel_vxlan_vni";
      description = "VXLAN VNI (vxlan backend).";
    };
    vxlanPort = opt {
      type = t.port; default = 8472; scope = "cluster"; kubespray = "flannel_vxlan_port";
      description = "VXLAN UDP port (vxlan backend).";
    };
    directRouting = opt {
      type = t.bool; default = false; scope = "cluster"; kubespray = "flannel_vxlan_direct_routing";
      description = "Use direct routes between nodes on the same subnet (vxlan backend).";
    };
    interface = opt {
      type = t.nullOr t.plainName; default = null; scope = "cluster"; kubespray = "flannel_interface";
      description = "Interface flannel uses (--iface); null: the default route's interface.";
    };
  };
}
