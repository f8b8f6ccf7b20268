# A lab-like 3-node cluster for the hash-locality tests (tests/cli/closures_eval.rs): the
# arguments switch on one change at a time, and the test asserts exactly which
# (node, phase) hashes move. No deployer or project files, so it hashes anywhere.
{ workerMaxPods ? null, mirror ? false, etcdVersion ? null }:
let kd = import <kdeploy>; in
kd.cluster {
  name = "locality";
  nodes = {
    cp1 = { address = "10.77.0.11"; roles = [ "control-plane" "etcd" ]; };
    w1 = { address = "10.77.0.12"; roles = [ "worker" ];
           settings = if workerMaxPods == null then { } else { kubelet.maxPods = workerMaxPods; }; };
    w2 = { address = "10.77.0.13"; roles = [ "worker" ]; };
  };
  settings = {
    network.nodeCIDR = "10.77.0.0/24";
    containerd.registryMirrors = if mirror
      then { "docker.io" = [ { host = "https://mirror.example.com"; } ]; }
      else kd.mkDefault { "docker.io" = [ { host = "https://registry-1.docker.io"; } ]; };
  } // (if etcdVersion == null then { } else { etcd.version = etcdVersion; });
}
