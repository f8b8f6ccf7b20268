# Cluster memberships the engine changes one member at a time
# (src/deploy/membership.rs), as data: per membership the phase whose step starts or
# stops a member, the members the definition wants (name, peer URL, and how to wipe
# a member's data on its node), and the commands the engine runs. Only etcd's today
# (deployment type "host"): members join as learners (`member add --learner`,
# started with the join environment, promoted once in sync) and leave with
# `member remove` before their etcd is stopped, so quorum holds at every step.
#
# Commands run under sh on a node; arguments come in environment variables
# (KDEPLOY_MEMBER_NAME, KDEPLOY_MEMBER_PEER, KDEPLOY_MEMBER_ID,
# KDEPLOY_INITIAL_CLUSTER), never spliced into the text. `list` prints etcdctl's
# simple format: `ID, STATUS, NAME, PEER ADDRS, CLIENT ADDRS, IS LEARNER`.
#
# Backups (etcd.backup; src/deploy/snapshot.rs): `snapshot` prints a snapshot of a
# member's data on stdout, taken before a switch changes one of `snapshotBefore`'s
# phases and by `kdeploy snapshot`; the deployer keeps the `keep` newest. Recovery
# (`kdeploy restore`, Kubespray's recover-control-plane): every member's `aside` stops
# it and renames its data (nothing is deleted), one member's `restore` makes the
# snapshot on its stdin a cluster of that one member and starts it, then the others
# join it one at a time as learners (`add`, `join`, `start`, `promote`).
ctx: nodeList:
let
  inherit (builtins) filter map listToAttrs;
  lib = import ./lib;
  inherit (lib) text;
  cs = ctx.settings;
  bin = cs.paths.binDir;
  etcdctl = "${bin}/etcdctl.sh";
  joinEnv = "/run/etcd/join.env";
  members = filter (n: n.isEtcd) nodeList;
  # what a restore or an aside leaves of a member's earlier data: renamed, not deleted
  setAside = dataDir: "if [ -e ${dataDir}/member ]; then mv -- ${dataDir}/member \"${dataDir}/member.before-restore.$(date +%Y%m%dT%H%M%S)\"; fi";
  # etcd 3.6 restores with etcdutl only; 3.4 and 3.5 also with etcdctl
  restore = dataDir: text.lines [
    "set -e"
    "umask 077"
    "f=$(mktemp /var/tmp/kdeploy-etcd-restore.XXXXXX)"
    "t=${dataDir}.kdeploy-restore"
    "trap 'rm -rf -- \"$f\" \"$t\"' EXIT"
    "cat >\"$f\""
    "systemctl kill --signal=KILL etcd.service 2>/dev/null || true"
    "systemctl stop etcd.service"
    "rm -rf -- \"$t\""
    "if [ -x ${bin}/etcdutl ]; then u=${bin}/etcdutl; else u=${bin}/etcdctl; fi"
    # the token is /etc/etcd.env's (templates/etcd.nix)
    "\"$u\" snapshot restore \"$f\" --name \"$KDEPLOY_MEMBER_NAME\" --initial-cluster \"$KDEPLOY_MEMBER_NAME=$KDEPLOY_MEMBER_PEER\" --initial-advertise-peer-urls \"$KDEPLOY_MEMBER_PEER\" --initial-cluster-token k8s_etcd --data-dir \"$t\" >&2"
    "mkdir -p ${dataDir}"
    "chmod 0700 ${dataDir}"
    (setAside dataDir)
    "mv -- \"$t/member\" ${dataDir}/member"
    "rm -f ${joinEnv}"
    "systemctl start etcd.service"
  ];
in
if cs.etcd.deploymentType != "host" || members == [ ] then { }
else {
  etcd = {
    phase = "etcd";
    members = listToAttrs (map
      (n: {
        name = n.name;
        value = {
          name = n.etcdMemberName;
          peer = ctx.etcd.peerURL n.address;
          # etcd may be restarting here after a leave that was cut off: stop it first
          wipe = "{ systemctl stop etcd.service 2>/dev/null || true; } && rm -rf -- ${n.settings.etcd.dataDir}/member ${joinEnv}";
          # the cluster is lost: no graceful stop (it would wait for peers that are gone)
          aside = "{ systemctl kill --signal=KILL etcd.service 2>/dev/null || true; } && systemctl stop etcd.service && ${setAside n.settings.etcd.dataDir} && rm -f ${joinEnv}";
          restore = restore n.settings.etcd.dataDir;
        };
      })
      members);
    list = "${etcdctl} member list";
    add = "${etcdctl} member add \"$KDEPLOY_MEMBER_NAME\" --learner --peer-urls=\"$KDEPLOY_MEMBER_PEER\"";
    promote = "${etcdctl} member promote \"$KDEPLOY_MEMBER_ID\"";
    remove = "${etcdctl} member remove \"$KDEPLOY_MEMBER_ID\"";
    # leadership moves to the via member if the leaving one leads: the endpoint whose
    # own member ID is the leader's (`endpoint status -w fields`, the same in 3.4-3.6)
    handoff = ''lead=$(ETCDCTL_ENDPOINTS="$KDEPLOY_ENDPOINTS" ${etcdctl} endpoint status -w fields | while read -r k _ v; do case $k in '"MemberID"') id=$v ;; '"Leader"') ld=$v ;; '"Endpoint"') [ "$id" != "$ld" ] || echo "$v" ;; esac; done) && { [ "$lead" != "\"$KDEPLOY_MEMBER_CLIENT\"" ] || ETCDCTL_ENDPOINTS="$KDEPLOY_ENDPOINTS" ${etcdctl} move-leader "$KDEPLOY_TARGET_ID"; }'';
    start = "systemctl start etcd.service";
    snapshot =
      if !cs.etcd.backup.enable then null
      else "set -e; umask 077; f=$(mktemp /var/tmp/kdeploy-etcd-snapshot.XXXXXX); trap 'rm -f -- \"$f\" \"$f.part\"' EXIT; ${etcdctl} snapshot save \"$f\" >&2; cat -- \"$f\"";
    snapshotBefore = [ "etcd" "control-plane" ];
    keep = cs.etcd.backup.keep;
    # read by etcd.service after /etc/etcd.env; etcd ignores both once its data exists
    join = "mkdir -p /run/etcd && printf 'ETCD_INITIAL_CLUSTER_STATE=existing\\nETCD_INITIAL_CLUSTER=%s\\n' \"$KDEPLOY_INITIAL_CLUSTER\" >${joinEnv}";
  };
}
