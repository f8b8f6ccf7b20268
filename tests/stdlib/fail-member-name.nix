# expect: option 'etcd.memberName' in nodes.a.settings (
# expect: "etcd1 --peer-urls=x" is not a name of letters, digits and . _ -
let kd = import <kdeploy>; in
kd.cluster {
  name = "t";
  nodes.a = { address = "10.0.0.1"; roles = [ "control-plane" "etcd" "worker" ];
    settings.etcd.memberName = "etcd1 --peer-urls=x";  # <- error points here
  };
}
