# expect: option 'preinstall.etcHostsExtra' in settings (
# expect: element 1: "10.0.0.5 a\n10.0.0.6 b" is not a line of text (no newline or other control character)
let kd = import <kdeploy>; in
kd.cluster {
  name = "t";
  nodes.a = { address = "10.0.0.1"; roles = [ "control-plane" "etcd" "worker" ]; };
  settings = {
    preinstall.etcHostsExtra = [ "10.0.0.5 a\n10.0.0.6 b" ];  # <- error points here
  };
}
