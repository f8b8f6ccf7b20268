# expect: option 'kubeProxy.mode' in settings (
# expect: unknown value "ipvss" (expected one of: ipvs, iptables, nftables). Did you mean 'ipvs'?
let kd = import <kdeploy>; in
kd.cluster {
  name = "t";
  nodes.a = { address = "10.0.0.1"; roles = [ "control-plane" "etcd" "worker" ]; };
  settings.kubeProxy.mode = "ipvss";  # <- error points here
}
