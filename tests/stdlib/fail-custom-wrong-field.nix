# expect: unknown field 'onchange' in a unit
# expect: Did you mean 'onChange'?
let kd = import <kdeploy>; in
kd.cluster {
  name = "t";
  nodes.a = { address = "10.0.0.1"; roles = [ "control-plane" "etcd" "worker" ]; };
  settings.custom.units."x.service" = { phase = "preinstall"; text = "[Service]\nExecStart=/bin/true\n"; onchange = "reload"; };  # <- error points here
}
