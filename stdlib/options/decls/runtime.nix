# Options of the container runtime: containerd (config.toml, registries, service
# limits), runc and crictl (Kubespray's container-engine/containerd defaults).
{ opt, t, versions, ... }:
let
  mirror = t.struct "a registry mirror { host; capabilities?; skipVerify?; overridePath?; }" {
    host = { type = t.url; };
    capabilities = { type = t.listOf (t.enum [ "pull" "resolve" "push" ]); default = [ "pull" "resolve" ]; };
    skipVerify = { type = t.bool; default = false; };
    overridePath = { type = t.bool; default = false; };
  };
in
{
  containerRuntime = opt {
    type = t.enum [ "containerd" ]; default = "containerd"; scope = "cluster"; kubespray = "container_manager";
    description = "Container runtime. Only containerd is implemented (Kubespray also offers crio and docker).";
  };

  containerd = {
    version = opt {
      type = t.version; default = versions.containerd.default; kubespray = "containerd_version";
      description = "containerd version. Selects the config.toml schema (version 2 below 2.0, version 3 from 2.0, version 4 from 2.3). With a URL download it needs a checksum (stdlib/checksums.nix or download.checksums); with download.local.containerd set it to what that binary is (e.g. \"1.6.20\" for Debian 12).";
    };
    storageDir = opt {
      type = t.dataDir; default = "/var/lib/containerd"; kubespray = "containerd_storage_dir";
      description = "containerd root directory.";
    };
    stateDir = opt {
      type = t.dataDir; default = "/run/containerd"; kubespray = "containerd_state_dir";
      description = "containerd state directory.";
    };
    oomScore = opt {
      type = t.int; default = 0; kubespray = "containerd_oom_score";
      description = "oom_score of the containerd daemon.";
    };
    defaultRuntime = opt {
      type = t.plainName; default = "runc"; kubespray = "containerd_default_runtime";
      description = "Default CRI runtime handler.";
    };
    snapshotter = opt {
      type = t.plainName; default = "overlayfs"; kubespray = "containerd_snapshotter";
      description = "Snapshotter used by the CRI plugin.";
    };
    systemdCgroup = opt {
      type = t.bool; default = true; kubespray = "containerd_use_systemd_cgroup";
      description = "runc option SystemdCgroup (must match kubelet.cgroupDriver).";
    };
    registryMirrors = opt {
      type = t.attrsWithNames t.registryHost (t.listOf mirror);
      default = { "docker.io" = [{ host = "https://registry-1.docker.io"; }]; };
      kubespray = "containerd_registries_mirrors";
      example = { "docker.io" = [{ host = "https://mirror.example.com"; }]; };
      description = "Registry hosts per registry prefix, written to /etc/containerd/certs.d/<prefix>/hosts.toml.";
    };
    maxContainerLogLineSize = opt {
      type = t.int; default = 16384; kubespray = "containerd_max_container_log_line_size";
      description = "Maximum container log line size in bytes.";
    };
    enableUnprivilegedPorts = opt {
      type = t.bool; default = false; kubespray = "containerd_enable_unprivileged_ports";
      description = "Allow unprivileged users to bind ports below 1024 in containers.";
    };
    restrictOomScoreAdj = opt {
      type = t.bool; default = false;
      description = "restrict_oom_score_adj of the CRI plugin: never give a container an oom_score_adj below containerd's own. For nodes that are themselves unprivileged containers without CAP_SYS_RESOURCE (kind, rootless, the kdeploy lab), where a negative score fails every pod sandbox.";
    };
    enableUnprivilegedIcmp = opt {
      type = t.bool; default = false; kubespray = "containerd_enable_unprivileged_icmp";
      description = "Allow unprivileged ICMP sockets in containers.";
    };
    discardUnpackedLayers = opt {
      type = t.bool; default = true; kubespray = "containerd_discard_unpacked_layers";
      description = "Discard layer blobs once unpacked (containerd < 2.1).";
    };
    imagePullProgressTimeout = opt {
      type = t.duration; default = "5m"; kubespray = "containerd_image_pull_progress_timeout";
      description = "Abort a pull without progress after this long (containerd >= 1.7).";
    };
    debugLevel = opt {
      type = t.enum [ "trace" "debug" "info" "warn" "error" "fatal" "panic" ]; default = "info"; kubespray = "containerd_debug_level";
      description = "containerd log level.";
    };
    enableCdi = opt {
      type = t.bool; default = false; kubespray = "enable_cdi";
      description = "Enable the Container Device Interface.";
    };
    extraConfig = opt {
      type = t.str; default = ""; kubespray = "containerd_extra_args";
      description = "TOML text inserted verbatim near the top of config.toml.";
    };
    limitNofile = opt {
      type = t.int; default = 1048576; kubespray = "containerd_limit_open_file_num";
      description = "LimitNOFILE of containerd.service.";
    };
  };

  runc.version = opt {
    type = t.version; default = versions.runc.default; kubespray = "runc_version";
    description = "runc version (URL download: needs a checksum in stdlib/checksums.nix or download.checksums).";
  };

  crictl.version = opt {
    type = t.nullOr t.version; default = null; kubespray = "crictl_version";
    description = "crictl version (null: the one pinned for the Kubernetes minor version).";
  };

  cni.version = opt {
    type = t.version; default = versions.cni.default; scope = "cluster"; kubespray = "cni_version";
    description = "Version of the CNI reference plugins placed in /opt/cni/bin.";
  };
}
