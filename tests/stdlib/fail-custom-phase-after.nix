# expect: custom.phases.ntp
# expect: placed after 'preinstal', which is not a phase before it
let kd = import <kdeploy>; in
kd.cluster {
  name = "t";
  nodes.a = { address = "10.0.0.1"; roles = [ "control-plane" "etcd" "worker" ]; };
  settings.custom.phases = {
    ntp = { after = "preinstal"; };  # <- error points here
  };
}
