# etcd files: /etc/etcd.env with the flags valid for the deployed etcd version (3.4
# needs ETCD_LOGGER=zap; 3.6 drops the v2 proxy and renames experimental flags), the
# etcd.service unit, and an etcdctl.sh wrapper.
let
  lib = import ../lib;
  inherit (lib) text;
  inherit (builtins) attrNames map;
  atLeast = lib.version.atLeast;
in
{
  env = { ctx, node, version }:
    let
      s = ctx.settings;
      e = s.etcd;
      ns = node.settings.etcd;
      a = node.address;
      url = ctx.etcd;
      tls = e.tls;
      cert = ctx.etcd.certDir;
      is36 = atLeast version "3.6.0";
      kv = name: value: { inherit name value; };
    in
    text.lines [ "# Environment file for etcd ${version} (managed by kdeploy)." ]
    + text.envLines ([
      (kv "ETCD_NAME" node.etcdMemberName)
      (kv "ETCD_DATA_DIR" ns.dataDir)
      (kv "ETCD_ADVERTISE_CLIENT_URLS" (url.clientURL a))
      (kv "ETCD_INITIAL_ADVERTISE_PEER_URLS" (url.peerURL a))
      # a member joining a running cluster gets "existing" from /run/etcd/join.env
      (kv "ETCD_INITIAL_CLUSTER_STATE" "new")
      (kv "ETCD_INITIAL_CLUSTER" url.initialCluster)
      (kv "ETCD_INITIAL_CLUSTER_TOKEN" "k8s_etcd")
      (kv "ETCD_LISTEN_CLIENT_URLS" "${url.clientURL a},${url.scheme}://127.0.0.1:2379")
      (kv "ETCD_LISTEN_PEER_URLS" (url.peerURL a))
      (kv "ETCD_METRICS" e.metrics)
    ]
    ++ text.optional (e.metricsPort != null)
      (kv "ETCD_LISTEN_METRICS_URLS" "http://${a}:${toString e.metricsPort},http://127.0.0.1:${toString e.metricsPort}")
    ++ [
      (kv "ETCD_ELECTION_TIMEOUT" e.electionTimeout)
      (kv "ETCD_HEARTBEAT_INTERVAL" e.heartbeatInterval)
      (kv "ETCD_AUTO_COMPACTION_RETENTION" e.compactionRetention)
      (kv "ETCD_SNAPSHOT_COUNT" e.snapshotCount)
      (kv "ETCD_QUOTA_BACKEND_BYTES" e.quotaBackendBytes)
      (kv "ETCD_MAX_REQUEST_BYTES" e.maxRequestBytes)
      (kv "ETCD_MAX_SNAPSHOTS" e.maxSnapshots)
      (kv "ETCD_MAX_WALS" e.maxWals)
      (kv "ETCD_LOG_LEVEL" e.logLevel)
    ]
    # etcd 3.4 logs with capnslog unless told otherwise; --log-level needs zap.
    ++ text.optional (!(atLeast version "3.5.0")) (kv "ETCD_LOGGER" "zap")
    # The v2 proxy flags are gone in 3.6.
    ++ text.optional (!is36) (kv "ETCD_PROXY" "off")
    ++ (if is36 then [
      (kv "ETCD_FEATURE_GATES" "InitialCorruptCheck=true")
      (kv "ETCD_WATCH_PROGRESS_NOTIFY_INTERVAL" "5s")
    ] else [
      (kv "ETCD_EXPERIMENTAL_INITIAL_CORRUPT_CHECK" true)
      (kv "ETCD_EXPERIMENTAL_WATCH_PROGRESS_NOTIFY_INTERVAL" "5s")
    ])
    ++ text.optionals tls [
      (kv "ETCD_TRUSTED_CA_FILE" "${cert}/ca.pem")
      (kv "ETCD_CERT_FILE" "${cert}/member-${node.name}.pem")
      (kv "ETCD_KEY_FILE" "${cert}/member-${node.name}-key.pem")
      (kv "ETCD_CLIENT_CERT_AUTH" true)
      (kv "ETCD_PEER_TRUSTED_CA_FILE" "${cert}/ca.pem")
      (kv "ETCD_PEER_CERT_FILE" "${cert}/member-${node.name}.pem")
      (kv "ETCD_PEER_KEY_FILE" "${cert}/member-${node.name}-key.pem")
      (kv "ETCD_PEER_CLIENT_CERT_AUTH" true)
    ]
    ++ map (k: kv k e.extraVars.${k}) (attrNames e.extraVars)
    # For operators: `set -a; . /etc/etcd.env` makes etcdctl talk to this member.
    ++ [ (kv "ETCDCTL_ENDPOINTS" "${url.scheme}://127.0.0.1:2379") ]
    ++ text.optionals tls [
      (kv "ETCDCTL_CACERT" "${cert}/ca.pem")
      (kv "ETCDCTL_CERT" "${cert}/admin-${node.name}.pem")
      (kv "ETCDCTL_KEY" "${cert}/admin-${node.name}-key.pem")
    ]);

  unit = { binDir }: text.lines [
    "[Unit]"
    "Description=etcd (managed by kdeploy)"
    "After=network.target"
    ""
    "[Service]"
    "Type=notify"
    "User=root"
    "EnvironmentFile=/etc/etcd.env"
    # written by kdeploy when this member joins a running cluster (stdlib/membership.nix)
    "EnvironmentFile=-/run/etcd/join.env"
    "ExecStart=${binDir}/etcd"
    "NotifyAccess=all"
    "Restart=always"
    "RestartSec=10s"
    "LimitNOFILE=40000"
    ""
    "[Install]"
    "WantedBy=multi-user.target"
  ];

  # etcdctl with this node's endpoint (and client certificate when TLS is on).
  wrapper = { binDir, tls, cert, nodeName, scheme }: text.lines ([
    "#!/bin/sh"
    "# etcdctl for this member (managed by kdeploy). Example: etcdctl.sh member list"
    "export ETCDCTL_ENDPOINTS=\"\${ETCDCTL_ENDPOINTS:-${scheme}://127.0.0.1:2379}\""
  ] ++ text.optionals tls [
    "export ETCDCTL_CACERT=${cert}/ca.pem"
    "export ETCDCTL_CERT=${cert}/admin-${nodeName}.pem"
    "export ETCDCTL_KEY=${cert}/admin-${nodeName}-key.pem"
  ] ++ [ "exec ${binDir}/etcdctl \"$@\"" ]);
}
