# expect: option 'paths.binDir' in settings (
# expect: "/usr/local/../bin" is not normalised (no . or .. components)
let kd = import <kdeploy>; in
kd.cluster {
  name = "t";
  nodes.a = { address = "10.0.0.1"; roles = [ "control-plane" "etcd" "worker" ]; };
  settings = {
    paths.binDir = "/usr/local/../bin";  # <- error points here
  };
}
