# Nix path values given by the user (ssh.key, download.local, etcd.certDir) come out as
# plain strings: nothing in the cluster value is a path, so nothing is copied to a store.
let
  kd = import <kdeploy>;
  c = kd.cluster {
    name = "paths";
    nodes.a = { address = "10.0.0.1"; roles = [ "control-plane" "etcd" "worker" ]; ssh.key = ./priorities.nix; };
    settings.download.local.etcd = ./etcd-loopback.nix;
  };
  json = builtins.toJSON c;
  etcdFile = builtins.head (builtins.filter (f: f.path == "/usr/local/bin/etcd")
    (builtins.elemAt c.nodes.a.phases 2).files);
in
{
  noStorePaths = builtins.match ".*/nix/store.*" json == null;
  keyIsString = builtins.isString c.nodes.a.ssh.key;
  keyIsAbsolute = builtins.substring 0 1 c.nodes.a.ssh.key == "/";
  localIsString = builtins.isString etcdFile.source.local;
}
