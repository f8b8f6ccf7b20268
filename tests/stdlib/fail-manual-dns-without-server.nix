# expect: manual DNS without server: dns.mode is "manual" but dns.manualServer is not set
let kd = import <kdeploy>; in
kd.cluster {
  name = "t";
  nodes.a = { address = "10.0.0.1"; roles = [ "control-plane" "etcd" "worker" ]; };
  settings.dns.mode = "manual";  # <- error points here
}
