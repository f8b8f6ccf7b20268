# The secrets a cluster needs, by name and recipe only: the engine makes each one on the
# deployer the first time it is needed (in .kdeploy/secrets/, never in the evaluated
# value) and keeps it. Names are `<cluster>/<what>`, so several clusters of one project
# keep apart. Certificates follow Kubespray's etcd PKI (roles/etcd, make-ssl-etcd.sh):
# one etcd CA; per etcd member `member-<node>` (server and peer) and `admin-<node>`
# (etcdctl); per control plane `node-<node>` (the API server's etcd client).
ctx:
let
  inherit (builtins) map;
  cluster = ctx.name;
  domain = ctx.settings.dns.domain;
  altNames =
    if ctx.settings.etcd.certAltNames != null then ctx.settings.etcd.certAltNames
    else [ "etcd.kube-system.svc.${domain}" "etcd.kube-system.svc" "etcd.kube-system" "etcd" ];
  # The user's own CA (etcd.caDir, absolute) is read where it lies; kdeploy's own is
  # made into the store.
  caDir = ctx.settings.etcd.caDir;
  ca = {
    cert = if caDir == null then "${cluster}/etcd/ca.pem" else "${caDir}/ca.pem";
    key = if caDir == null then "${cluster}/etcd/ca-key.pem" else "${caDir}/ca-key.pem";
    commonName = "etcd-ca";
  };
  # A certificate is valid for its own node only (Kubespray puts every etcd and
  # control-plane host in every certificate), so adding a member touches nobody else's.
  etcdCert = kind: node:
    let base = "${cluster}/etcd/${kind}-${node.name}"; in {
      kind = "cert";
      inherit ca;
      cert = "${base}.pem";
      key = "${base}-key.pem";
      commonName = "etcd-${kind}-${node.name}";
      organization = null;
      server = kind == "member";
      client = true;
      dnsNames = [ node.name "localhost" ] ++ altNames;
      ipAddresses = [ node.address "127.0.0.1" "::1" ] ++ ctx.settings.etcd.certAltIPs;
    };
in
{
  # The files of /etc/ssl/etcd/ssl a node gets: [ { name; mode; secret; } ].
  etcdFiles = { node, member }:
    let
      pair = kind: let m = etcdCert kind node; in [
        { name = "${kind}-${node.name}.pem"; mode = "0640"; secret = { name = m.cert; make = m; }; }
        { name = "${kind}-${node.name}-key.pem"; mode = "0600"; secret = { name = m.key; make = m; }; }
      ];
    in
    [ { name = "ca.pem"; mode = "0644"; secret = { name = ca.cert; make = { kind = "ca"; } // ca; }; } ]
    ++ (if member then pair "member" ++ pair "admin" else [ ])
    ++ (if node.isControlPlane then pair "node" else [ ]);

  kubeadmToken = { name = "${cluster}/kubeadm/token"; make = { kind = "token"; }; };
  certificateKey = { name = "${cluster}/kubeadm/certificate-key"; make = { kind = "hex"; bytes = 32; }; };
}
