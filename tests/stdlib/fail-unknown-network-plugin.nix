# expect: option 'network.plugin' in settings (
# expect: unknown value "calcio" (expected one of: calico, flannel, cni, none). Did you mean 'calico'?
let kd = import <kdeploy>; in
kd.cluster {
  name = "t";
  nodes.a = { address = "10.0.0.1"; roles = [ "control-plane" "etcd" "worker" ]; };
  settings = {
    network.plugin = "calcio";  # <- error points here
  };
}
