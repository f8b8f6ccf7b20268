# expect: option 'dns.mode' in settings (
# expect: unknown value "core-dns" (expected one of: coredns, coredns_dual, manual, none). Did you mean 'coredns'?
let kd = import <kdeploy>; in
kd.cluster {
  name = "t";
  nodes.a = { address = "10.0.0.1"; roles = [ "control-plane" "etcd" "worker" ]; };
  settings.dns.mode = "core-dns";  # <- error points here
}
