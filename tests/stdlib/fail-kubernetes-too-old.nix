# expect: unsupported Kubernetes version: 1.29.4 is below the supported minimum 1.31.0
let kd = import <kdeploy>; in
kd.cluster {
  name = "t";
  nodes.a = { address = "10.0.0.1"; roles = [ "control-plane" "etcd" "worker" ]; };
  settings.kubernetes.version = "1.29.4";  # <- error points here
}
