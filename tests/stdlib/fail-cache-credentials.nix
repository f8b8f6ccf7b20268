# expect: option 'transfer.cache' in settings (
# expect: the URL holds credentials (user:password@), which would sit in every node's process list
let kd = import <kdeploy>; in
kd.cluster {
  name = "t";
  nodes.a = { address = "10.0.0.1"; roles = [ "control-plane" "etcd" "worker" ]; };
  settings = {
    transfer.cache = "http://kd:hunter2@10.0.0.5:8080/cache";  # <- error points here
  };
}
