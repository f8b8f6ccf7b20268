# expect: option 'kubelet.maxPods' in settings (
# expect: expected an integer from 1 to 2500, got the string "200"
let kd = import <kdeploy>; in
kd.cluster {
  name = "t";
  nodes.a = { address = "10.0.0.1"; roles = [ "control-plane" "etcd" "worker" ]; };
  settings = {
    kubelet.maxPods = "200";  # <- error points here
  };
}
