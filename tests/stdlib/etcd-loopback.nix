# A 3-member etcd on loopback addresses, rendered by the stdlib for the etcd version
# installed on the test host; etcd-smoke.sh starts it from the generated etcd.env files.
{ etcdVersion ? "3.4.23" }:
let kd = import <kdeploy>; in
kd.cluster {
  name = "etcd-smoke";
  nodes = {
    m1 = { address = "127.0.0.2"; roles = [ "control-plane" "etcd" ]; };
    m2 = { address = "127.0.0.3"; roles = [ "worker" "etcd" ]; };
    m3 = { address = "127.0.0.4"; roles = [ "worker" "etcd" ]; };
  };
  settings = {
    paths.binDir = "/usr/bin"; # the generated health check then runs the host's etcdctl
    etcd.version = etcdVersion;
    download.local = { etcd = "/usr/bin/etcd"; etcdctl = "/usr/bin/etcdctl"; };
    # Plain HTTP: this smoke test has no certificates on the host (kdeploy makes the PKI
    # at switch time); mutual TLS is exercised against the lab (tests/lab/secrets.rs).
    etcd.tls = false;
  };
}
