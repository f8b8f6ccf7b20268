# expect: unsupported Kubernetes version: 1.33.99 has no checksum of kubelet, kubeadm, kubectl for amd64 (node a; known: 1.33.0, 1.33.1
# expect: set download.checksums.kubelet.amd64."1.33.99" (and kubeadm, kubectl) = "sha256:<hex>"
let kd = import <kdeploy>; in
kd.cluster {
  name = "t";
  nodes.a = { address = "10.0.0.1"; roles = [ "control-plane" "etcd" "worker" ]; };
  settings.kubernetes.version = "1.33.99";  # <- error points here
}
