# expect: option 'kubelet.customFlags' in settings (
# expect: element 1: "--node-labels=\"a\"$(reboot)" is not a flag like --name=value
let kd = import <kdeploy>; in
kd.cluster {
  name = "t";
  nodes.a = { address = "10.0.0.1"; roles = [ "control-plane" "etcd" "worker" ]; };
  settings = {
    kubelet.customFlags = [ "--node-labels=\"a\"$(reboot)" ];  # <- error points here
  };
}
