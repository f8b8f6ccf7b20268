# expect: option 'network.plugin' is cluster-wide and cannot be set in roleSettings.worker (
let kd = import <kdeploy>; in
kd.cluster {
  name = "t";
  nodes = {
    a = { address = "10.0.0.1"; roles = [ "control-plane" "etcd" ]; };
    b = { address = "10.0.0.2"; roles = [ "worker" ]; };
  };
  roleSettings.worker = {
    network.plugin = "flannel";  # <- error points here
  };
}
