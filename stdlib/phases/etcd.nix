# Phase "etcd" (Kubespray role etcd, deployment type "host"): /etc/etcd.env, the data
# directory (0700), etcd.service, an etcdctl.sh wrapper, optional TLS files from
# kdeploy's etcd PKI (or etcd.certDir), a hook removing the member data of a node that left, and a
# health check (etcdctl endpoint health needs quorum). On etcd nodes, plus the etcd
# client certificates on control planes when etcd.tls is on; nothing when kubeadm
# runs etcd.
ctx: group:
let
  lib = import ../lib;
  tpl = import ../templates/etcd.nix;
  inherit (lib) records text;
  inherit (builtins) elem map;
  cs = ctx.settings;
  s = group.settings;
  bin = cs.paths.binDir;
  version = ctx.versions.etcd;
  tls = cs.etcd.tls;
  cert = ctx.etcd.certDir;
  scheme = ctx.etcd.scheme;
  managedEtcd = !(elem "etcd" cs.download.skip) && ctx.active "etcd";
  etcdctl = "${bin}/etcdctl";
  member = group.isEtcd && cs.etcd.deploymentType == "host";
  # Kubespray names: member-* (server/peer), admin-* (etcdctl), node-* (kube-apiserver).
  # Made by kdeploy (../secrets.nix) unless etcd.certDir names the user's own files: then
  # each key is a secret read from there (secretFile), each certificate a plain file.
  own = cs.etcd.certDir;
  ownSource = f: if f.private then { secretFile = "${own}/${f.name}"; } else { local = "${own}/${f.name}"; };
  certFiles = node: text.optionals tls (map
    (f: records.file ({ path = "${cert}/${f.name}"; mode = f.mode; }
      // (if own != null then ownSource f else { inherit (f) secret; })))
    ((import ../secrets.nix ctx).etcdFiles { inherit node member; }));
  certDirs = text.optionals tls [
    (records.directory { path = "/etc/ssl/etcd"; mode = "0700"; })
    (records.directory { path = cert; mode = "0700"; })
  ];
  # A node that left etcd keeps no member data: after its step stopped etcd (the
  # engine has already run `member remove`), the data goes too.
  removeData = {
    hooks = [
      (records.hook {
        name = "etcd-remove-data";
        when = "post";
        undo.nothing = "removes what a member that left kept: nothing to put back";
        run = "rm -rf -- ${s.etcd.dataDir}/member /run/etcd/join.env";
        unless = "[ ! -e ${s.etcd.dataDir}/member ]";
      })
    ];
  };
  unit = certPaths: records.unit {
    name = "etcd.service";
    text = tpl.unit { binDir = bin; };
    onChange = "restart";
    enable = true;
    restartTriggers = [ "/etc/etcd.env" ] ++ certPaths ++ text.optional managedEtcd "${bin}/etcd";
  };
in
if cs.etcd.deploymentType != "host" then { }
# control planes that are not members only need the client certificates for the API server
else if !member then
  (if tls && group.isControlPlane then node: { directories = certDirs; files = certFiles node; } // removeData
  else removeData)
else node:
let
  others = builtins.filter (m: m.name != node.name) ctx.etcd.members;
  othersEndpoints = builtins.concatStringsSep "," (map (m: ctx.etcd.clientURL m.address) others);
  myPeer = ctx.etcd.peerURL node.address;
  myCertFiles = certFiles node;
  tlsFlags = text.optionalString tls
    " --cacert=${cert}/ca.pem --cert=${cert}/admin-${node.name}.pem --key=${cert}/admin-${node.name}-key.pem";
  envFile = records.file {
    path = "/etc/etcd.env";
    mode = "0640";
    text = tpl.env { inherit ctx node version; };
  };
in
{
  directories = [ (records.directory { path = s.etcd.dataDir; mode = "0700"; }) ] ++ certDirs;

  files = [ envFile ] ++ myCertFiles ++ [
    (records.file {
      path = "${bin}/etcdctl.sh";
      mode = "0755";
      text = tpl.wrapper { binDir = bin; inherit tls cert scheme; nodeName = node.name; };
    })
  ];

  units = [ (unit (map (f: f.path) myCertFiles)) ];

  # Reset (kdeploy reset, switch --prune; Kubespray reset.yml and remove-node.yml):
  # when other nodes remain, leave the cluster first through the other members (a
  # member left listed counts against quorum, kubespray#8941, and a node switched
  # again later could not rejoin), then stop etcd and remove its data.
  hooks = [
    (records.hook {
      name = "etcd-reset";
      when = "reset";
      run = text.lines (text.optionals (others != [ ]) [
        "if [ \"$KDEPLOY_RESET\" = nodes ]; then"
        "  members=$(${etcdctl} --endpoints=${othersEndpoints}${tlsFlags} member list) || exit 1"
        "  id=$(printf '%s\\n' \"$members\" | while IFS=', ' read -r i _ _ peer _; do if [ \"$peer\" = ${myPeer} ]; then echo \"$i\"; fi; done)"
        "  if [ -n \"$id\" ]; then"
        # a leader removed steps down and clients wait out an election: hand it off first
        "    lead=$(${etcdctl} --endpoints=${scheme}://127.0.0.1:2379${tlsFlags} endpoint status -w fields 2>/dev/null | while read -r k _ v; do case $k in '\"MemberID\"') m=$v ;; '\"Leader\"') [ \"$m\" != \"$v\" ] || echo yes ;; esac; done)"
        "    to=$(printf '%s\\n' \"$members\" | while IFS=', ' read -r i st _ peer _ learner; do if [ \"$peer\" != ${myPeer} ] && [ \"$st\" = started ] && [ \"$learner\" = false ]; then echo \"$i\"; break; fi; done)"
        "    if [ \"$lead\" = yes ] && [ -n \"$to\" ]; then ${etcdctl} --endpoints=${scheme}://127.0.0.1:2379${tlsFlags} move-leader \"$to\" || true; fi"
        "    ${etcdctl} --endpoints=${othersEndpoints}${tlsFlags} member remove \"$id\" || exit 1"
        "  fi"
        "fi"
      ] ++ [
        # the whole cluster goes: a graceful stop only waits for peers that are gone
        "if [ \"$KDEPLOY_RESET\" = cluster ]; then systemctl kill --signal=KILL etcd.service 2>/dev/null || true; fi"
        "systemctl stop etcd.service || exit 1"
        # a dedicated disk mounted there stays mounted: only what is on it goes
        "if mountpoint -q ${s.etcd.dataDir}; then find ${s.etcd.dataDir} -mindepth 1 -xdev -delete || exit 1; else rm -rf -- ${s.etcd.dataDir}; fi"
        "rm -f /run/etcd/join.env"
      ]);
    })
  ];

  checks = [
    (records.check {
      name = "etcd-endpoint-health";
      run = "${etcdctl} --endpoints=${scheme}://127.0.0.1:2379${tlsFlags} endpoint health";
      retries = 20;
      delay = 3;
    })
  ];
}
