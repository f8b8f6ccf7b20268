# expect: node 'a': unknown attribute 'role'
# expect: Did you mean 'roles'?
let kd = import <kdeploy>; in
kd.cluster {
  name = "t";
  nodes = {
    a = { address = "10.0.0.1"; role = [ "control-plane" "etcd" ]; };  # <- error points here
  };
}
