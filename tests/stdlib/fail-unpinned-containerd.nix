# expect: containerd 1.6.20 (amd64) has no sha256 (known: 1.7.20 to 2.3.4 in stdlib/checksums.nix): set download.checksums.containerd.amd64."1.6.20" = "sha256:<hex>"
# expect: or download.local.containerd to a file on the deployer
let kd = import <kdeploy>; in
kd.cluster {
  name = "t";
  nodes.a = { address = "10.0.0.1"; roles = [ "control-plane" "etcd" "worker" ]; };
  settings.containerd.version = "1.6.20";
}
