# expect: unknown component: download.local.etcdclt is not a component. Did you mean 'etcdctl'?
let kd = import <kdeploy>; in
kd.cluster {
  name = "t";
  nodes.a = { address = "10.0.0.1"; roles = [ "control-plane" "etcd" "worker" ]; };
  settings.download.local = {
    etcdclt = "/usr/bin/etcdctl";  # <- error points here
  };
}
