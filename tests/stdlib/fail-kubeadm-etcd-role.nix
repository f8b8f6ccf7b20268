# expect: etcd role unused: etcd.deploymentType is "kubeadm"
let kd = import <kdeploy>; in
kd.cluster {
  name = "t";
  nodes = {
    a = { address = "10.0.0.1"; roles = [ "control-plane" "etcd" ]; };
  };
  settings = {
    etcd.deploymentType = "kubeadm";  # <- error points here
  };
}
