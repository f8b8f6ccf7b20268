# expect: no etcd node: no node has the role "etcd"
let kd = import <kdeploy>; in
kd.cluster {
  name = "t";
  nodes = {  # <- error points here
    a = { address = "10.0.0.1"; roles = [ "control-plane" "worker" ]; };
  };
}
