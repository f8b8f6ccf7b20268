# Options of the etcd cluster (Kubespray's etcd_defaults and kubespray_defaults etcd_*).
{ opt, t, versions, ... }:
{
  etcd = {
    deploymentType = opt {
      type = t.enum [ "host" "kubeadm" ]; default = "host"; scope = "cluster"; kubespray = "etcd_deployment_type";
      description = "host: kdeploy runs etcd as a systemd service on the etcd nodes. kubeadm: kubeadm runs etcd as a static pod on the control-plane nodes (no etcd nodes needed).";
    };
    version = opt {
      type = t.nullOr t.version; default = null; scope = "cluster"; kubespray = "etcd_version";
      description = "etcd version (null: the one pinned for the Kubernetes minor version). Flags are rendered for this version; set it to what a `download.local.etcd` binary really is.";
    };
    tls = opt {
      type = t.bool; default = true; scope = "cluster"; kubespray = "etcd_secure_client / etcd_peer_client_auth";
      description = "Mutual TLS for etcd peer and client traffic (client and peer certificate authentication on), with the etcd PKI kdeploy makes and keeps in .kdeploy/secrets/<cluster>/etcd/ on the deployer (or the files of etcd.certDir). false: plain, unauthenticated HTTP (a warning).";
    };
    certDir = opt {
      type = t.nullOr t.deployerPath; default = null; scope = "cluster"; kubespray = "etcd_cert_dir";
      description = "Your own etcd certificates instead of kdeploy's: a directory on the deployer holding Kubespray-named PEM files (ca.pem, member-<node>[-key].pem, admin-<node>[-key].pem on etcd members, node-<node>[-key].pem on control planes), pushed to /etc/ssl/etcd/ssl. Each *-key.pem travels as a secret (secretFile: sent only over SSH, never in the blob store, the binary cache, a diff or eval's output); the certificates are plain files. Read where local sources may be (the project, --allow-local). null: kdeploy makes them.";
    };
    caDir = opt {
      type = t.nullOr t.deployerPath; default = null; scope = "cluster"; kubespray = "etcd_cert_dir (ca.pem, ca-key.pem)";
      example = "/srv/pki/etcd";
      description = "Your own etcd CA instead of the one kdeploy makes: an absolute directory on the deployer (or a Nix path like ./pki) holding ca.pem and ca-key.pem. kdeploy issues every member/admin/node certificate from it and keeps them in .kdeploy/secrets/<cluster>/etcd/; the CA key never leaves the deployer. Replacing the CA re-issues every certificate. Cannot be combined with etcd.certDir.";
    };
    certAltNames = opt {
      type = t.nullOr (t.listOf t.host); default = null; scope = "cluster"; kubespray = "etcd_cert_alt_names";
      example = [ "etcd.example.internal" "etcd" ];
      description = "DNS names every etcd certificate carries besides its node's name and localhost (a VIP's or load balancer's name, say). null: Kubespray's default, etcd.kube-system.svc.<dns.domain>, etcd.kube-system.svc, etcd.kube-system and etcd.";
    };
    certAltIPs = opt {
      type = t.listOf t.ipAddress; default = [ ]; scope = "cluster"; kubespray = "etcd_cert_alt_ips";
      description = "IP addresses every etcd certificate carries besides its node's address, 127.0.0.1 and ::1 (a VIP, say).";
    };
    backup = {
      enable = opt {
        type = t.bool; default = true; scope = "cluster"; kubespray = "etcd_backup (etcd_events_backup)";
        description = "Take an etcd snapshot before a switch changes etcd or the control planes (or etcd's membership), kept on the deployer in .kdeploy/snapshots/etcd/ (0600; never readable by the evaluator). `kdeploy snapshot` takes one at any time; `kdeploy restore` brings a cluster that lost its etcd majority back from the newest. A snapshot that cannot be taken from a running cluster stops the switch before it changes anything (`switch --no-snapshot` goes on without).";
      };
      keep = opt {
        type = t.intBetween 1 1000; default = 5; scope = "cluster"; kubespray = "etcd_backup_retention_count";
        description = "How many snapshots the deployer keeps (the newest; at least 1).";
      };
    };
    dataDir = opt {
      type = t.dataDir; default = "/var/lib/etcd"; kubespray = "etcd_data_dir";
      description = "etcd data directory (created with mode 0700).";
    };
    memberName = opt {
      type = t.nullOr t.plainName; default = null; kubespray = "etcd_member_name";
      description = "etcd member name of this node (null: the node name; Kubespray's default is etcd1, etcd2, ... by inventory order, which changes when nodes are reordered).";
    };
    heartbeatInterval = opt {
      type = t.int; default = 250; scope = "cluster"; kubespray = "etcd_heartbeat_interval";
      description = "Heartbeat interval in ms.";
    };
    electionTimeout = opt {
      type = t.int; default = 5000; scope = "cluster"; kubespray = "etcd_election_timeout";
      description = "Election timeout in ms.";
    };
    snapshotCount = opt {
      type = t.int; default = 100000; scope = "cluster"; kubespray = "etcd_snapshot_count";
      description = "Committed transactions that trigger a snapshot.";
    };
    compactionRetention = opt {
      type = t.retention; default = "8"; scope = "cluster"; kubespray = "etcd_compaction_retention";
      description = "Auto compaction retention (hours).";
    };
    quotaBackendBytes = opt {
      type = t.int; default = 2147483648; scope = "cluster"; kubespray = "etcd_quota_backend_bytes";
      description = "Backend size quota in bytes.";
    };
    maxRequestBytes = opt {
      type = t.int; default = 1572864; scope = "cluster"; kubespray = "etcd_max_request_bytes";
      description = "Maximum client request size in bytes.";
    };
    maxSnapshots = opt {
      type = t.int; default = 5; scope = "cluster"; kubespray = "etcd_max_snapshots";
      description = "Snapshot files to keep (0: unlimited).";
    };
    maxWals = opt {
      type = t.int; default = 5; scope = "cluster"; kubespray = "etcd_max_wals";
      description = "WAL files to keep (0: unlimited).";
    };
    logLevel = opt {
      type = t.enum [ "debug" "info" "warn" "error" "panic" "fatal" ]; default = "info"; scope = "cluster"; kubespray = "etcd_log_level";
      description = "etcd log level.";
    };
    metrics = opt {
      type = t.enum [ "basic" "extensive" ]; default = "basic"; scope = "cluster"; kubespray = "etcd_metrics";
      description = "Level of detail of exported metrics.";
    };
    metricsPort = opt {
      type = t.nullOr t.port; default = null; scope = "cluster"; kubespray = "etcd_metrics_port";
      description = "If set, serve metrics over plain HTTP on this port (node address and 127.0.0.1).";
    };
    extraVars = opt {
      type = t.attrsWithNames t.envName t.envValue; default = { }; scope = "cluster"; kubespray = "etcd_extra_vars";
      example = { ETCD_EXPERIMENTAL_WATCH_PROGRESS_NOTIFY_INTERVAL = "10s"; };
      description = "Extra environment variables appended to /etc/etcd.env.";
    };
  };
}
