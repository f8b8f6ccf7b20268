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
ctx: nodeList:
let
  inherit (builtins) filter map listToAttrs;
  cs = ctx.settings;
  etcdctl = "${cs.paths.binDir}/etcdctl.sh";
  joinEnv = "/run/etcd/join.env";
  members = filter (n: n.isEtcd) nodeList;
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
    # read by etcd.service after /etc/etcd.env; etcd ignores both once its data exists
    join = "mkdir -p /run/etcd && printf 'ETCD_INITIAL_CLUSTER_STATE=existing\\nETCD_INITIAL_CLUSTER=%s\\n' \"$KDEPLOY_INITIAL_CLUSTER\" >${joinEnv}";
  };
}
