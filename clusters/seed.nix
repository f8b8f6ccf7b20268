# The seed layout: one control plane that also runs etcd, two workers. Kubernetes
# binaries are downloaded from dl.k8s.io / GitHub with the checksums pinned in the
# stdlib. The etcd PKI, the kubeadm bootstrap token and certificate key are made by
# kdeploy on the first switch (kept in .kdeploy/secrets/seed/, git-ignored).
let kd = import <kdeploy>; in
kd.cluster {
  name = "seed";
  nodes = {
    cp1 = { address = "192.168.10.10"; roles = [ "control-plane" "etcd" ]; };
    worker1 = { address = "192.168.10.21"; roles = [ "worker" ]; };
    worker2 = { address = "192.168.10.22"; roles = [ "worker" ]; };
  };
  settings = {
    kubernetes.version = "1.33.5";
    network.plugin = "calico";
    network.nodeCIDR = "192.168.10.0/24";
    ssh.user = "root";
    dns.nameservers = [ "192.168.10.1" ];
  };
}
