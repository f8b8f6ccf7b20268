# expect: option 'dns.upstreamServers' in settings (
# expect: element 2: "8.8.8" is not an IPv4 address
let kd = import <kdeploy>; in
kd.cluster {
  name = "t";
  nodes.a = { address = "10.0.0.1"; roles = [ "control-plane" "etcd" "worker" ]; };
  settings.dns.upstreamServers = [ "1.1.1.1" "8.8.8" ];  # <- error points here
}
