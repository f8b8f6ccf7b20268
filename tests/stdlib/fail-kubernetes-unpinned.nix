# expect: unsupported Kubernetes version: 1.33.99 has no pinned checksums in stdlib/versions.nix
let kd = import <kdeploy>; in
kd.cluster {
  name = "t";
  nodes.a = { address = "10.0.0.1"; roles = [ "control-plane" "etcd" "worker" ]; };
  settings.kubernetes.version = "1.33.99";  # <- error points here
}
