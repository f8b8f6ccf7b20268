# expect: option 'etcd.dataDir' in settings (
# expect: "/etc" is a system directory; give the service a directory of its own
let kd = import <kdeploy>; in
kd.cluster {
  name = "t";
  nodes.a = { address = "10.0.0.1"; roles = [ "control-plane" "etcd" "worker" ]; };
  settings = {
    etcd.dataDir = "/etc";  # <- error points here
  };
}
