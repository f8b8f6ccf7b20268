# expect: option 'etcd.extraVars' in settings (
# expect: attribute name "ETCD_X;touch /tmp/x" is not an environment variable name
let kd = import <kdeploy>; in
kd.cluster {
  name = "t";
  nodes.a = { address = "10.0.0.1"; roles = [ "control-plane" "etcd" "worker" ]; };
  settings = {
    etcd.extraVars = { "ETCD_X;touch /tmp/x" = "1"; };  # <- error points here
  };
}
