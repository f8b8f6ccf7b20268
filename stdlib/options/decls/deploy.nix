# Options of the deployment itself: where binaries come from (URLs with checksums or
# local files of the deployer) and which phases are only generated, not activated.
{ opt, t, versions, phaseNames, components }:
{
  download = {
    githubUrl = opt {
      type = t.url; default = "https://github.com"; scope = "cluster"; kubespray = "github_url";
      description = "Base URL for GitHub release downloads (point at a mirror for air-gapped use; checksums stay the same).";
    };
    dlK8sIoUrl = opt {
      type = t.url; default = "https://dl.k8s.io"; scope = "cluster"; kubespray = "dl_k8s_io_url";
      description = "Base URL for Kubernetes binaries.";
    };
    dockerImageRepo = opt {
      type = t.registry; default = "docker.io"; scope = "cluster"; kubespray = "docker_image_repo";
      description = "Registry for images from Docker Hub (flannel, nginx, haproxy).";
    };
    quayImageRepo = opt {
      type = t.registry; default = "quay.io"; scope = "cluster"; kubespray = "quay_image_repo";
      description = "Registry for images from quay.io (calico).";
    };
    filesRepo = opt {
      type = t.nullOr t.url; default = null; scope = "cluster"; kubespray = "files_repo";
      example = "http://mirror.example:8080/files";
      description = "A mirror of the release files: every download URL becomes <filesRepo>/<host>/<path> of its upstream URL (e.g. <filesRepo>/github.com/etcd-io/etcd/releases/download/v3.5.23/etcd-v3.5.23-linux-amd64.tar.gz), the layout of Kubespray's offline guide. Checksums stay the same.";
    };
    checksums = opt {
      type = t.attrsOf (t.attrsOf (t.attrsOf t.sha256)); default = { }; scope = "cluster";
      example = { etcd.amd64."3.5.24" = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"; };
      description = "Checksums to add to or override stdlib/checksums.nix, shaped like Kubespray's checksums (component -> arch -> version). Components: kubelet, kubeadm, kubectl, etcd, containerd, runc, crictl, cni-plugins, calicoctl, calico-crds. A version with no checksum is an evaluation error naming the entry to set.";
    };
    local = opt {
      type = t.attrsOf t.deployerPath; default = { }; scope = "cluster";
      example = { etcd = "/usr/bin/etcd"; };
      description = "Take these components from files on the deployer instead of downloading them (air-gapped and lab use; the engine hashes the file). Components: ${builtins.concatStringsSep ", " components}.";
    };
    skip = opt {
      type = t.listOf (t.enum components); default = [ ]; scope = "cluster";
      description = "Components not to install at all (already on the nodes, or unavailable).";
    };
    prePullImages = opt {
      type = t.bool; default = true; scope = "cluster"; kubespray = "download_container";
      description = "Pull the container images each node needs in the download phase (with crictl), as Kubespray does.";
    };
  };

  transfer = {
    cache = opt {
      type = t.nullOr t.nodeUrl; default = null; scope = "cluster";
      example = "http://10.0.0.5:8080/kdeploy";
      description = "An HTTP binary cache the nodes fetch blobs from, so the deployer's uplink carries one copy of each however many nodes need it: the deployer uploads each blob a node lacks once (HTTP PUT to <cache>/<blake3 hash>, e.g. an nginx location with dav_methods PUT) and each node fetches it with curl or wget and checks its sha256. Secrets (kdeploy's own and your secretFile ones: etcd.certDir keys, kubeadm.tokenFile, kubeadm.certificateKeyFile) never go there; what a node cannot fetch is sent over SSH, and a blob a node finds damaged there is put again. Reached directly by the deployer and the nodes, never through proxy.*; no credentials in the URL (every node's fetch command would show them): restrict it by address.";
    };
  };

  # Rolling changes: a phase whose step restarts or stops units on several nodes
  # does it in batches, each passing the phase's checks before the next starts.
  # A node counts as etcd if it has that role, else control plane, else worker.
  rollout = {
    etcd = opt {
      type = t.serial; default = 1; scope = "cluster";
      description = "etcd members restarted or stopped at once (a number, or a percentage such as \"20%\"). One keeps quorum in any cluster of three or more.";
    };
    controlPlane = opt {
      type = t.serial; default = 1; scope = "cluster";
      description = "Control-plane nodes (not etcd members) restarted or stopped at once.";
    };
    workers = opt {
      type = t.serial; default = "20%"; scope = "cluster"; kubespray = "serial";
      description = "Worker nodes restarted or stopped at once; Kubespray's upgrade default.";
    };
  };

  # Kubernetes upgrades (a change of kubernetes.version): each node's kubelet phase is
  # wrapped in a cordon/drain and an uncordon run from the anchor, as Kubespray's
  # upgrade-cluster.yml does from the first control plane.
  upgrade = {
    drainNodes = opt {
      type = t.bool; default = true; scope = "cluster"; kubespray = "drain_nodes";
      description = "During an upgrade, cordon and drain each node before its kubelet is replaced and uncordon it after (false: cordon and uncordon only).";
    };
    drainTimeout = opt {
      type = t.duration; default = "360s"; scope = "cluster"; kubespray = "drain_timeout";
      description = "How long one node's drain may take before the upgrade stops (kubectl drain --timeout).";
    };
    drainGracePeriod = opt {
      type = t.int; default = 300; scope = "cluster"; kubespray = "drain_grace_period";
      description = "Seconds each evicted pod gets to terminate (kubectl drain --grace-period; -1: the pod's own).";
    };
  };

  kdeploy = {
    generateOnly = opt {
      type = t.listOf (t.enum phaseNames); default = [ ]; scope = "cluster";
      example = [ "kubelet" "control-plane" "cni" "addons" "resolvconf" ];
      description = "Phases that are generated, hashed and pushed but never activated (phase.activate = false): no switch, no units started, no hooks, no checks. Binaries and images only those phases need are not downloaded. For labs that cannot run Kubernetes.";
    };
    # deploy-rs's "magic rollback"
    selfRollback = {
      enable = opt {
        type = t.bool; default = true; scope = "cluster";
        description = "Before a switch of a phase named in kdeploy.selfRollback.phases, arm the node: unless the deployer confirms the change over a new SSH connection within kdeploy.selfRollback.deadline seconds (once the phase's checks pass), the node moves the phase back by itself, with the other phases the run switched on it, restarting what it changed, as soon as no run holds its lock. A change that locks the deployer out (an sshd setting, a firewall rule) then undoes itself; the deployer waits for it and reports it.";
      };
      deadline = opt {
        type = t.intBetween 5 3600; default = 30; scope = "cluster";
        description = "Seconds after a guarded phase begins to switch before its node may move it back by itself (it never does while the deployer that armed it holds its lock).";
      };
      phases = opt {
        type = t.nullOr (t.listOf t.plainName); default = null; scope = "cluster";
        example = [ "preinstall" "cni" "time-sync" ];
        description = "The phases a switch arms (null: those that can cut the deployer off: preinstall, cni, resolvconf and every phase of your own, custom.phases). A membership change (etcd) is never armed.";
      };
    };
  };
}
