# expect: option 'kubelet.maxPods' has conflicting definitions of equal priority: roleSettings.etcd (
# expect: sets 90, roleSettings.worker (
let kd = import <kdeploy>; in
kd.cluster {
  name = "t";
  nodes = {
    a = { address = "10.0.0.1"; roles = [ "control-plane" "etcd" ]; };
    d = { address = "10.0.0.4"; roles = [ "etcd" ]; };
    b = { address = "10.0.0.2"; roles = [ "worker" "etcd" ]; };
    c = { address = "10.0.0.3"; roles = [ "worker" ]; };
  };
  roleSettings = {
    etcd.kubelet.maxPods = 90;  # <- error points here
    worker.kubelet.maxPods = 100;
  };
}
