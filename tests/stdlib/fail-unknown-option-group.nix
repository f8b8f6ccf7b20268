# expect: unknown option 'kublet' in roleSettings.worker (
# expect: Did you mean 'kubelet'?
let kd = import <kdeploy>; in
kd.cluster {
  name = "t";
  nodes = {
    a = { address = "10.0.0.1"; roles = [ "control-plane" "etcd" ]; };
    b = { address = "10.0.0.2"; roles = [ "worker" ]; };
  };
  roleSettings.worker = {
    kublet.maxPods = 200;  # <- error points here
  };
}
