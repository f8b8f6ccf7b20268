# expect: custom.files."/etc/motd"
# expect: phase 'addon' is not a phase
# expect: Did you mean 'addons'?
let kd = import <kdeploy>; in
kd.cluster {
  name = "t";
  nodes.a = { address = "10.0.0.1"; roles = [ "control-plane" "etcd" "worker" ]; };
  roleSettings.worker.custom.files."/etc/motd" = { phase = "addon"; text = "hi\n"; };  # <- error points here
}
