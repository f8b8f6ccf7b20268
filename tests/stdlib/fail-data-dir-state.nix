# expect: option 'containerd.storageDir' in nodes.a.settings (
# expect: "/var/lib/kdeploy/containerd" lies in /var/lib/kdeploy, which kdeploy never manages
let kd = import <kdeploy>; in
kd.cluster {
  name = "t";
  nodes.a = { address = "10.0.0.1"; roles = [ "control-plane" "etcd" "worker" ];
    settings.containerd.storageDir = "/var/lib/kdeploy/containerd";  # <- error points here
  };
}
