# expect: overlapping networks: node b's address 10.233.70.5 lies inside the pod network 10.233.64.0/18
let kd = import <kdeploy>; in
kd.cluster {
  name = "t";
  nodes = {
    a = { address = "10.0.0.1"; roles = [ "control-plane" "etcd" ]; };
    b = { address = "10.233.70.5"; roles = [ "worker" ]; };  # <- error points here
  };
}
