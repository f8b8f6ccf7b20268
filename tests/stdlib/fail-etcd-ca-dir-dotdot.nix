# expect: secret "/srv/../etc/pki/ca.pem": name "/srv/../etc/pki/ca.pem", make.cert "/srv/../etc/pki/ca.pem", make.key "/srv/../etc/pki/ca-key.pem" is not a secret name
let kd = import <kdeploy>; in
kd.cluster {
  name = "t";
  nodes.a = { address = "10.0.0.1"; roles = [ "control-plane" "etcd" "worker" ]; };
  settings = {
    etcd.caDir = "/srv/../etc/pki";
  };
}
