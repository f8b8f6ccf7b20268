# expect: containerd 1.6.20 has no pinned sha256 in stdlib/versions.nix
# expect: or set download.local.containerd to a file on the deployer
let kd = import <kdeploy>; in
kd.cluster {
  name = "t";
  nodes.a = { address = "10.0.0.1"; roles = [ "control-plane" "etcd" "worker" ]; };
  settings.containerd.version = "1.6.20";
}
