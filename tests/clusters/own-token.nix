# A cluster with the user's own kubeadm token file, which this directory does not hold:
# building its closures must fail naming the missing file and where it is used.
let kd = import <kdeploy>; in
kd.cluster {
  name = "own-token";
  nodes.cp1 = { address = "192.168.10.10"; roles = [ "control-plane" "etcd" ]; };
  settings = {
    kubeadm.tokenFile = "secrets/kubeadm-token";
    dns.nameservers = [ "192.168.10.1" ];
  };
}
