# expect: no control plane: no node has the role "control-plane"
let kd = import <kdeploy>; in
kd.cluster {
  name = "t";
  nodes = {  # <- error points here
    a = { address = "10.0.0.1"; roles = [ "etcd" "worker" ]; };
  };
}
