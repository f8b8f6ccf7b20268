# expect: even number of etcd members: etcd needs an odd number of members to keep quorum, but 2 would run (a, b); use 1 or 3
let kd = import <kdeploy>; in
kd.cluster {
  name = "t";
  nodes = {  # <- error points here
    a = { address = "10.0.0.1"; roles = [ "control-plane" ]; };
    b = { address = "10.0.0.2"; roles = [ "control-plane" ]; };
  };
  settings.etcd.deploymentType = "kubeadm";
}
