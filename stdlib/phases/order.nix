# The phase order: Kubespray's play order, as data. The engine activates phases in
# this order on every node, with a barrier between phases.
{
  order = [
    "preinstall"
    "container-runtime"
    "download"
    "etcd"
    "kubelet"
    "control-plane"
    "cni"
    "addons"
    "resolvconf"
  ];
}
