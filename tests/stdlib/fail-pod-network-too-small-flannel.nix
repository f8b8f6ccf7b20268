# expect: pod network too small: 10.233.64.0/23 holds 2 blocks of /24 (network.nodePrefix) but the cluster has 3 Kubernetes nodes
let kd = import <kdeploy>; in
kd.cluster {
  name = "t";
  nodes = {
    a = { address = "10.0.0.1"; roles = [ "control-plane" "etcd" ]; };
    b = { address = "10.0.0.2"; roles = [ "worker" ]; };
    c = { address = "10.0.0.3"; roles = [ "worker" ]; };
  };
  settings = {
    network.plugin = "flannel";
    network.podCIDR = "10.233.64.0/23";  # <- error points here
  };
}
