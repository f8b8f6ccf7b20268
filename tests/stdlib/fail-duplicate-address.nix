# expect: duplicate address: 10.0.0.1 is used by a, b
let kd = import <kdeploy>; in
kd.cluster {
  name = "t";
  nodes = {
    a = { address = "10.0.0.1"; roles = [ "control-plane" "etcd" ]; };
    b = { address = "10.0.0.1"; roles = [ "worker" ]; };  # <- error points here
  };
}
