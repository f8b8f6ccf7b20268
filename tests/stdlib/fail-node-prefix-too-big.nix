# expect: pod network too small: network.nodePrefix /16 is larger than the whole pod network 10.233.64.0/18
let kd = import <kdeploy>; in
kd.cluster {
  name = "t";
  nodes = {
    a = { address = "10.0.0.1"; roles = [ "control-plane" "etcd" "worker" ]; };
  };
  settings = {
    network.plugin = "flannel";
    network.nodePrefix = 16;  # <- error points here
  };
}
