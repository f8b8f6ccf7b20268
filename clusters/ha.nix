# A highly available layout: three control planes that are also the etcd members, three
# workers. Workers reach the API servers through a localhost load balancer (an nginx
# static pod on each worker, Kubespray's default), so losing one control plane does not
# cut them off. The etcd PKI and the kubeadm secrets are made by kdeploy on the first
# switch (.kdeploy/secrets/ha/, git-ignored).
let kd = import <kdeploy>; in
kd.cluster {
  name = "ha";
  nodes = {
    cp1 = { address = "192.168.20.11"; roles = [ "control-plane" "etcd" ]; };
    cp2 = { address = "192.168.20.12"; roles = [ "control-plane" "etcd" ]; };
    cp3 = { address = "192.168.20.13"; roles = [ "control-plane" "etcd" ]; };
    worker1 = { address = "192.168.20.21"; roles = [ "worker" ]; };
    worker2 = { address = "192.168.20.22"; roles = [ "worker" ]; };
    worker3 = {
      address = "192.168.20.23";
      roles = [ "worker" ];
      settings.kubelet.maxPods = 200;
      ssh = { user = "admin"; port = 2222; };
    };
  };
  settings = {
    kubernetes.version = "1.33.5";
    network.nodeCIDR = "192.168.20.0/24";
    loadBalancer.localhost = true;
    loadBalancer.type = "nginx";
    loadBalancer.healthcheckPort = 8081;
    addons.metricsServer.enable = true;
    dns.nameservers = [ "192.168.20.1" ];
    ssh.key = "~/.ssh/kdeploy_ed25519";
  };
  roleSettings = {
    worker.kubelet.maxPods = kd.mkDefault 150;
    control-plane.kubelet.kubeReserved = { cpu = "200m"; memory = "512Mi"; };
  };
}
