# expect: pod network too small: node b: kubelet.maxPods 300 does not fit a /24 pod block (at most 254)
let kd = import <kdeploy>; in
kd.cluster {
  name = "t";
  nodes = {
    a = { address = "10.0.0.1"; roles = [ "control-plane" "etcd" ]; };
    b = { address = "10.0.0.2"; roles = [ "worker" ]; settings.kubelet.maxPods = 300; };  # <- error points here
  };
  settings.network.plugin = "flannel";
}
