# expect: node 'b': tag "Rack A" is not a name of lower-case letters, digits and '-'
let kd = import <kdeploy>; in
kd.cluster {
  name = "t";
  nodes = {
    a = { address = "10.0.0.1"; roles = [ "control-plane" "etcd" ]; tags = [ "rack-a" ]; };
    b = { address = "10.0.0.2"; roles = [ "worker" ]; tags = [ "Rack A" ]; };  # <- error points here
  };
}
