# expect: even number of etcd members: etcd needs an odd number of members
let kd = import <kdeploy>; in
kd.cluster {
  name = "t";
  nodes = {  # <- error points here
    a = { address = "10.0.0.1"; roles = [ "control-plane" "etcd" ]; };
    b = { address = "10.0.0.2"; roles = [ "worker" "etcd" ]; };
  };
}
