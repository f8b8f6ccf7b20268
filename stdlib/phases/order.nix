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
  # When kubernetes.version changes: the control plane is upgraded before any
  # kubelet, so no kubelet is ever newer than the API server (Kubernetes'
  # version-skew policy; Kubespray's upgrade-cluster.yml does the same).
  upgradeOrder = [
    "preinstall"
    "container-runtime"
    "download"
    "etcd"
    "control-plane"
    "kubelet"
    "cni"
    "addons"
    "resolvconf"
  ];
}
