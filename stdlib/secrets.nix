# The secrets a cluster needs, by name and recipe only: the engine makes each one on the
# deployer the first time it is needed (in .kdeploy/secrets/, never in the evaluated
# value) and keeps it. Names are `<cluster>/<what>`, so several clusters of one project
# keep apart. Certificates follow Kubespray's etcd PKI (roles/etcd, make-ssl-etcd.sh):
# one etcd CA; per etcd member `member-<node>` (server and peer) and `admin-<node>`
# (etcdctl); per control plane `node-<node>` (the API server's etcd client).
ctx:
let
  inherit (builtins) map match filter concatStringsSep;
  errors = import ./lib/errors.nix;
  # The one rule for every name a secret holds (the engine checks the same,
  # store/secrets.rs name_problem): relative to the secret store, parts of letters,
  # digits and . _ @ - none empty or starting with '.' (so no '..'); only the user's
  # own CA (etcd.caDir) is an absolute, normalised path.
  nameOk = n: match "[A-Za-z0-9_@-][A-Za-z0-9._@-]*(/[A-Za-z0-9_@-][A-Za-z0-9._@-]*)*" n != null;
  ownOk = n: match "(/([^/.[:cntrl:]][^/[:cntrl:]]*|[.][^/.[:cntrl:]][^/[:cntrl:]]*|[.][.][^/[:cntrl:]]+))+" n != null;
  # Every name field of a secret: [ { field; name; own; } ].
  fields = s:
    [ { field = "name"; name = s.name; own = s.make.kind == "ca"; } ]
    ++ (if s.make.kind == "ca" then [ { field = "make.cert"; name = s.make.cert; own = true; } { field = "make.key"; name = s.make.key; own = true; } ]
    else if s.make.kind == "cert" then [
      { field = "make.cert"; name = s.make.cert; own = false; }
      { field = "make.key"; name = s.make.key; own = false; }
      { field = "make.ca.cert"; name = s.make.ca.cert; own = true; }
      { field = "make.ca.key"; name = s.make.ca.key; own = true; }
    ] else if s.make.kind == "ca-pin" then [
      { field = "make.ca.cert"; name = s.make.ca.cert; own = false; }
      { field = "make.ca.key"; name = s.make.ca.key; own = false; }
    ] else [ ]);
  bad = s: filter (f: !(nameOk f.name || (f.own && ownOk f.name))) (fields s);
  checked = s:
    let b = bad s; in
    if b == [ ] then s
    else errors.fail "secret ${builtins.toJSON s.name}: ${concatStringsSep ", " (map (f: "${f.field} ${builtins.toJSON f.name}") b)} is not a secret name (relative, plain parts, no '..'; only a user's own CA is absolute)";
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
  # The files of /etc/ssl/etcd/ssl a node gets: [ { name; mode; private; secret; } ]
  # (private: a key, which only ever travels as a secret).
  etcdFiles = { node, member }:
    let
      pair = kind: let m = etcdCert kind node; in [
        { name = "${kind}-${node.name}.pem"; mode = "0640"; private = false; secret = checked { name = m.cert; make = m; }; }
        { name = "${kind}-${node.name}-key.pem"; mode = "0600"; private = true; secret = checked { name = m.key; make = m; }; }
      ];
    in
    [ { name = "ca.pem"; mode = "0644"; private = false; secret = checked { name = ca.cert; make = { kind = "ca"; } // ca; }; } ]
    ++ (if member then pair "member" ++ pair "admin" else [ ])
    ++ (if node.isControlPlane then pair "node" else [ ]);

  # The Kubernetes CA, made by kdeploy (not by kubeadm init) so that every join can pin
  # it: the first control plane gets the pair (kubeadm init uses an existing CA, and it
  # signs with the key there), every node the pin of its public key (caCertHashes).
  kubernetesCA =
    let
      ca = { cert = "${cluster}/kubernetes/ca.crt"; key = "${cluster}/kubernetes/ca.key"; commonName = "kubernetes"; keyOnNodes = true; };
      make = { kind = "ca"; } // ca;
    in
    {
      cert = checked { name = ca.cert; inherit make; };
      key = checked { name = ca.key; inherit make; };
      pin = checked { name = "${cluster}/kubernetes/ca.pin"; make = { kind = "ca-pin"; inherit ca; }; };
    };

  kubeadmToken = checked { name = "${cluster}/kubeadm/token"; make = { kind = "token"; }; };
  certificateKey = checked { name = "${cluster}/kubeadm/certificate-key"; make = { kind = "hex"; bytes = 32; }; };
}
