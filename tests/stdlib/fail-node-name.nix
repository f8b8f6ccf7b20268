# expect: invalid node name: 'Worker_1' is not a DNS-1123 label
let kd = import <kdeploy>; in
kd.cluster {
  name = "t";
  nodes = {
    a = { address = "10.0.0.1"; roles = [ "control-plane" "etcd" ]; };
    Worker_1 = { address = "10.0.0.2"; roles = [ "worker" ]; };  # <- error points here
  };
}
