# expect: node 'b': unknown role "workr"
# expect: Did you mean 'worker'?
let kd = import <kdeploy>; in
kd.cluster {
  name = "t";
  nodes = {
    a = { address = "10.0.0.1"; roles = [ "control-plane" "etcd" ]; };
    b = { address = "10.0.0.2"; roles = [ "workr" ]; };  # <- error points here
  };
}
