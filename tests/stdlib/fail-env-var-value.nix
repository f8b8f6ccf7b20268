# expect: option 'etcd.extraVars' in settings (
# expect: attribute 'ETCD_X': "$(touch /tmp/x)" is not a value of letters, digits and . _ , : / = @ + -
let kd = import <kdeploy>; in
kd.cluster {
  name = "t";
  nodes.a = { address = "10.0.0.1"; roles = [ "control-plane" "etcd" "worker" ]; };
  settings = {
    etcd.extraVars.ETCD_X = "$(touch /tmp/x)";  # <- error points here
  };
}
