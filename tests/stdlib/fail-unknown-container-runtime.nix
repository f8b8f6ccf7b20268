# expect: option 'containerRuntime' in settings (
# expect: unknown value "containerd2" (expected one of: containerd). Did you mean 'containerd'?
let kd = import <kdeploy>; in
kd.cluster {
  name = "t";
  nodes.a = { address = "10.0.0.1"; roles = [ "control-plane" "etcd" "worker" ]; };
  settings.containerRuntime = "containerd2";  # <- error points here
}
