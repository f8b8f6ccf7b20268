# expect: overlapping networks: pod network 10.233.0.0/17 overlaps service network 10.233.0.0/18
let kd = import <kdeploy>; in
kd.cluster {
  name = "t";
  nodes = {
    a = { address = "10.0.0.1"; roles = [ "control-plane" "etcd" "worker" ]; };
  };
  settings = {
    network.podCIDR = "10.233.0.0/17";  # <- error points here
  };
}
