# expect: option 'paths.binDir' in settings (
# expect: "/usr/local/bin;touch /tmp/x" is not an absolute path of letters, digits and . _ + @ -
let kd = import <kdeploy>; in
kd.cluster {
  name = "t";
  nodes.a = { address = "10.0.0.1"; roles = [ "control-plane" "etcd" "worker" ]; };
  settings = {
    paths.binDir = "/usr/local/bin;touch /tmp/x";  # <- error points here
  };
}
