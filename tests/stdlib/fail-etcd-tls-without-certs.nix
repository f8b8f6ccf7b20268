# expect: etcd TLS without certificates: etcd.tls is true but etcd.certDir is not set
let kd = import <kdeploy>; in
kd.cluster {
  name = "t";
  nodes.a = { address = "10.0.0.1"; roles = [ "control-plane" "etcd" "worker" ]; };
  settings.etcd.tls = true;  # <- error points here
}
