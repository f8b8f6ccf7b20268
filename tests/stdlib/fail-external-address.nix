# expect: option 'loadBalancer.externalAddress' in settings (
# expect: "lb.example;reboot" is not a host name or IPv4 address
let kd = import <kdeploy>; in
kd.cluster {
  name = "t";
  nodes.a = { address = "10.0.0.1"; roles = [ "control-plane" "etcd" "worker" ]; };
  settings = {
    loadBalancer.externalAddress = "lb.example;reboot";  # <- error points here
  };
}
