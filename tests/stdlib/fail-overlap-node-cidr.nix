# expect: overlapping networks: node network 10.233.0.0/16 overlaps pod network
let kd = import <kdeploy>; in
kd.cluster {
  name = "t";
  nodes = {
    a = { address = "10.0.0.1"; roles = [ "control-plane" "etcd" "worker" ]; };
  };
  settings = {
    network.nodeCIDR = "10.233.0.0/16";  # <- error points here
  };
}
