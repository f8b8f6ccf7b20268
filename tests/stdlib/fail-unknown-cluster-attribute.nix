# expect: kd.cluster: unknown attribute 'setting'
# expect: Did you mean 'settings'?
let kd = import <kdeploy>; in
kd.cluster {
  name = "t";
  nodes.a = { address = "10.0.0.1"; roles = [ "control-plane" "etcd" "worker" ]; };
  setting.kubelet.maxPods = 10;  # <- error points here
}
