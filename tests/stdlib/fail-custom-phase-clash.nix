# expect: custom.phases.etcd
# expect: is one of kdeploy's phases; give yours another name
let kd = import <kdeploy>; in
kd.cluster {
  name = "t";
  nodes.a = { address = "10.0.0.1"; roles = [ "control-plane" "etcd" "worker" ]; };
  settings.custom.phases = {
    etcd = { after = "preinstall"; };  # <- error points here
  };
}
