# expect: unknown option 'kubelet.maxPod' in nodes.b.settings (
# expect: Did you mean 'kubelet.maxPods'?
let kd = import <kdeploy>; in
kd.cluster {
  name = "t";
  nodes = {
    a = { address = "10.0.0.1"; roles = [ "control-plane" "etcd" ]; };
    b = { address = "10.0.0.2"; roles = [ "worker" ]; settings.kubelet.maxPod = 200; };  # <- error points here
  };
}
