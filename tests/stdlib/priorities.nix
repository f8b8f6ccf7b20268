# Setting resolution: node > role > cluster at equal priority; kd.mkDefault loses to a
# plain definition anywhere; kd.mkForce wins over everything; overrides on a group
# apply to every option inside it; untouched options keep their defaults.
let
  kd = import <kdeploy>;
  c = kd.cluster {
    name = "prio";
    nodes = {
      a = { address = "10.0.0.1"; roles = [ "control-plane" "etcd" ]; };
      b = { address = "10.0.0.2"; roles = [ "worker" ]; settings.kubelet.maxPods = 50; };
      c = { address = "10.0.0.3"; roles = [ "worker" ]; settings.kubelet.maxPods = kd.mkDefault 60; };
      d = { address = "10.0.0.4"; roles = [ "worker" "etcd" "control-plane" ]; ssh.port = 2200; };
      e = { address = "10.0.0.5"; roles = [ "worker" "etcd" ]; settings.containerd = kd.mkForce { oomScore = -500; }; };
    };
    settings = {
      kubelet.maxPods = 100;
      kubelet.podPidsLimit = kd.mkForce 4096;
      containerd.oomScore = 10;
      ssh.user = "deploy";
    };
    roleSettings = {
      worker.kubelet.maxPods = 120;
      worker.kubelet.podPidsLimit = 1;
      etcd.ssh.user = kd.mkDefault "etcd-user";
      control-plane.containerd.oomScore = 20;
    };
  };
  pick = n: {
    maxPods = c.nodes.${n}.settings.kubelet.maxPods;
    pids = c.nodes.${n}.settings.kubelet.podPidsLimit;
    oom = c.nodes.${n}.settings.containerd.oomScore;
    user = c.nodes.${n}.ssh.user;
    port = c.nodes.${n}.ssh.port;
    logLines = c.nodes.${n}.settings.containerd.maxContainerLogLineSize;
  };
in
{
  a = pick "a";
  b = pick "b";
  c = pick "c";
  d = pick "d";
  e = pick "e";
  clusterMaxPods = c.settings.kubelet.maxPods;
}
