# expect: custom.files."/etc/motd" needs exactly one of `text` (the content), `file`
let kd = import <kdeploy>; in
kd.cluster {
  name = "t";
  nodes.a = { address = "10.0.0.1"; roles = [ "control-plane" "etcd" "worker" ]; };
  settings.custom.files."/etc/motd" = { phase = "preinstall"; };
}
