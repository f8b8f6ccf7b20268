# A checksum given for amd64 only: the arm64 node still has none.
# expect: unsupported Kubernetes version: 1.33.99 has no checksum of kubelet, kubeadm, kubectl for arm64 (node b; known: 1.33.0
# expect: set download.checksums.kubelet.arm64."1.33.99" (and kubeadm, kubectl) = "sha256:<hex>"
let
  kd = import <kdeploy>;
  sum = "sha256:0000000000000000000000000000000000000000000000000000000000000000";
in
kd.cluster {
  name = "t";
  nodes.a = { address = "10.0.0.1"; roles = [ "control-plane" "etcd" "worker" ]; };
  nodes.b = { address = "10.0.0.2"; roles = [ "worker" ]; settings.arch = "arm64"; };
  settings.kubernetes.version = "1.33.99";  # <- error points here
  settings.download.checksums = {
    kubelet.amd64."1.33.99" = sum;
    kubeadm.amd64."1.33.99" = sum;
    kubectl.amd64."1.33.99" = sum;
  };
}
