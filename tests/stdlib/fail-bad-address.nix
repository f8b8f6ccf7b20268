# expect: node 'a': address "10.0.0.300" is not an IPv4 address
let kd = import <kdeploy>; in
kd.cluster {
  name = "t";
  nodes = {
    a = { address = "10.0.0.300"; roles = [ "control-plane" "etcd" ]; };  # <- error points here
  };
}
