# expect: roleSettings: unknown role 'master'
let kd = import <kdeploy>; in
kd.cluster {
  name = "t";
  nodes.a = { address = "10.0.0.1"; roles = [ "control-plane" "etcd" "worker" ]; };
  roleSettings = {
    master.kubelet.maxPods = 10;  # <- error points here
  };
}
