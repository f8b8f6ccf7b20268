# expect: option 'network.podCIDR' in settings (
# expect: "10.233.64.1/18" has host bits set; the network is 10.233.64.0/18
let kd = import <kdeploy>; in
kd.cluster {
  name = "t";
  nodes.a = { address = "10.0.0.1"; roles = [ "control-plane" "etcd" "worker" ]; };
  settings.network.podCIDR = "10.233.64.1/18";  # <- error points here
}
