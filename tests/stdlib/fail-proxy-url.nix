# expect: option 'proxy.http' in settings (
# expect: "http://proxy:3128\"\nExecStartPre=/bin/sh -c reboot" is not an http(s) URL
let kd = import <kdeploy>; in
kd.cluster {
  name = "t";
  nodes.a = { address = "10.0.0.1"; roles = [ "control-plane" "etcd" "worker" ]; };
  settings = {
    proxy.http = "http://proxy:3128\"\nExecStartPre=/bin/sh -c reboot";  # <- error points here
  };
}
