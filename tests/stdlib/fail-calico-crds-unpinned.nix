# calicoctl goes to the (arm64) control plane only, so the amd64 worker needs no calicoctl
# checksum; the CRDs are one file for every architecture: the entry to set is no_arch.
# expect: unsupported calico version: 3.32.0 has no checksum of calico-crds for arm64 (node cp; known: 3.29.0 to 3.31.7 in stdlib/checksums.nix); set download.checksums.calico-crds.no_arch."3.32.0" = "sha256:<hex>"
let kd = import <kdeploy>; in
kd.cluster {
  name = "t";
  nodes.cp = { address = "10.0.0.1"; roles = [ "control-plane" "etcd" ]; settings.arch = "arm64"; };
  nodes.w = { address = "10.0.0.2"; roles = [ "worker" ]; };
  settings.calico.version = "3.32.0";  # <- error points here
  settings.download.checksums.calicoctl.arm64."3.32.0" = "sha256:1111111111111111111111111111111111111111111111111111111111111111";
}
