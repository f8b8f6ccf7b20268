# Phase "kubelet" (Kubespray role kubernetes/node): kubelet.env, kubelet-config.yaml and
# kubelet.service on every Kubernetes node, and on nodes without a control plane the
# localhost API load balancer (nginx or haproxy config + static pod manifest). The kubelet
# restarts until kubeadm (control-plane phase) gives it a kubeconfig, as with Kubespray.
ctx: group:
let
  lib = import ../lib;
  tpl = import ../templates/kubelet.nix;
  resolv = import ../templates/resolv.nix;
  inherit (lib) records text;
  inherit (builtins) elem;
  cs = ctx.settings;
  bin = cs.paths.binDir;
  nginx = cs.loadBalancer.type == "nginx";
  needsLB = ctx.api.localLB && (!group.isControlPlane || cs.apiserver.bindAddress != "::");
  # With a managed /etc/resolv.conf pointing at the cluster DNS, pods using the node's
  # resolvers (CoreDNS itself) must not see it, or DNS would loop.
  managedResolv = resolv.managed ctx group;
  resolvConf = if managedResolv then resolv.upstreamFile else "/etc/resolv.conf";

  envFile = node: records.file { path = envPath; mode = "0600"; text = tpl.env { inherit ctx node; }; };
  config = tpl.config { inherit ctx group resolvConf; };
  configFile = node: records.file { path = configPath; mode = "0600"; text = config node; };
  envPath = "/etc/kubernetes/kubelet.env";
  configPath = "/etc/kubernetes/kubelet-config.yaml";
  upstream = text.optional managedResolv (records.textFile resolv.upstreamFile (resolv.upstreamResolvConf group));
  lbFiles = text.optionals needsLB [
    (records.file {
      path = if nginx then "/etc/nginx/nginx.conf" else "/etc/haproxy/haproxy.cfg";
      mode = "0644";
      text = ctx.texts.lbConfig;
    })
    (records.file {
      path = "/etc/kubernetes/manifests/${if nginx then "nginx-proxy" else "haproxy"}.yml";
      mode = "0640";
      text = ctx.texts.lbManifest;
    })
  ];
  kubeletBinary = !(elem "kubelet" cs.download.skip) && ctx.active "kubelet";
  # A Kubernetes upgrade replaces the kubelet with the node cordoned and drained, from
  # the anchor (the only node with admin credentials from the start); a first switch
  # has nothing to drain, and the hooks are upgrade-only.
  anchor = ctx.firstControlPlane.name;
  kubectl = "${bin}/kubectl --kubeconfig=/etc/kubernetes/admin.conf";
  up = cs.upgrade;
  # The API server may be restarting when a drain or an uncordon runs (the anchor's own
  # kubelet, just replaced, re-creates its static pods; while it starts, it answers
  # "forbidden"): both wait until it is ready, and a failed drain is tried again. A
  # guard that cannot tell whether the node is registered does not skip the hook.
  waitAPI = text.lines [
    "i=0"
    "until ${kubectl} get --raw=/readyz >/dev/null 2>&1; do"
    "  i=$((i + 1))"
    "  if [ \"$i\" -ge 90 ]; then echo 'kdeploy: the API server is not ready after 180 s' >&2; exit 1; fi"
    "  sleep 2"
    "done"
  ];
  # (the node first: `kdeploy plan` shows a guard by its first line)
  registered = node: text.lines [ "node=${node.name}" waitAPI "! ${kubectl} get node \"$node\"" ];
  retried = what: cmd: text.lines [
    waitAPI
    "n=0"
    "until ${cmd}; do"
    "  n=$((n + 1))"
    "  if [ \"$n\" -ge 3 ]; then exit 1; fi"
    "  echo 'kdeploy: ${what} failed; again in 10 s' >&2"
    "  sleep 10"
    "done"
  ];
  drain = node: records.hook {
    name = "drain";
    when = "pre";
    undo.nothing = "cordons the node in the cluster's API (uncordon ends it), no file of the node";
    upgrade = true;
    delegate = anchor;
    run = retried "draining ${node.name}" (if up.drainNodes
      then "${kubectl} drain ${node.name} --ignore-daemonsets --delete-emptydir-data --force --grace-period=${toString up.drainGracePeriod} --timeout=${up.drainTimeout}"
      else "${kubectl} cordon ${node.name}");
    # a node joining in this run is not registered yet: nothing to drain
    unless = registered node;
  };
  # last of the post hooks
  uncordon = node: records.hook {
    name = "uncordon";
    undo.nothing = "the node's state in the cluster's API, no file of the node";
    upgrade = true;
    delegate = anchor;
    run = retried "uncordoning ${node.name}" "${kubectl} uncordon ${node.name}";
    unless = registered node;
  };
  resetHook = records.hook {
    name = "kubelet-reset";
    when = "reset";
    run = text.lines [
      "systemctl stop kubelet.service || exit 1"
      "for m in $(awk '$2 ~ \"^/var/lib/kubelet/\" { print $2 }' /proc/mounts | sort -r); do"
      "  umount \"$m\" || umount -l \"$m\" || exit 1"
      "done"
      "rm -rf /var/lib/kubelet /var/log/pods /var/log/containers"
      # the logind drop-in the kubelet writes for graceful node shutdown
      "rm -f /etc/systemd/logind.conf.d/99-kubelet.conf"
      "rmdir /etc/systemd/logind.conf.d 2>/dev/null || true"
      # a /lib/modules made for kube-proxy's hostPath where there was none: only while empty
      "rmdir /usr/lib/modules 2>/dev/null || true"
    ];
  };
  unit = records.unit {
    name = "kubelet.service";
    text = tpl.unit { binDir = bin; };
    onChange = "restart";
    enable = true;
    restartTriggers = [ envPath configPath ] ++ map (f: f.path) upstream
      ++ text.optional kubeletBinary "${bin}/kubelet";
  };
  directories = text.optional needsLB (records.directory { path = if nginx then "/etc/nginx" else "/etc/haproxy"; mode = "0700"; });
  # A control plane's kubelet, restarted, may re-create its static pods; kube-controller-
  # manager then waits for its old lease to expire before it leads again, and until it
  # does no Service endpoint changes. The next batch (a worker drained in an upgrade)
  # waits for this control plane to serve again and for a leader renewing each lease, or
  # a drained replica would stay in every Service after it stopped (Kubespray waits for
  # the controller manager and the scheduler too). Before kubeadm ran: nothing to wait for.
  controlPlaneServes = node: records.check {
    name = "control-plane-serves";
    run = text.lines [
      "test -f /etc/kubernetes/admin.conf || exit 0"
      "sleep 5"
      "${kubectl} get --raw=/readyz >/dev/null || exit 1"
      "now=$(date +%s)"
      "for lease in kube-controller-manager kube-scheduler; do"
      "  t=$(${kubectl} -n kube-system get lease \"$lease\" -o jsonpath='{.spec.renewTime}') || exit 1"
      "  s=$(date -d \"$t\" +%s) || exit 1"
      "  if [ $((now - s)) -gt 10 ]; then echo \"kdeploy: no $lease leader has renewed its lease for $((now - s)) s\" >&2; exit 1; fi"
      "done"
      "${kubectl} -n kube-system wait --for=condition=Ready --timeout=10s pod/kube-apiserver-${node.name} pod/kube-controller-manager-${node.name} pod/kube-scheduler-${node.name} >/dev/null"
    ];
    retries = 60;
    delay = 5;
  };
in
if !group.isK8s then { }
else node: {
  inherit directories;
  files = [ (envFile node) (configFile node) ] ++ upstream ++ lbFiles;
  # Reset (Kubespray reset.yml): stop the kubelet, unmount the pods' volumes, remove
  # what the kubelet made.
  hooks = [ (drain node) resetHook (uncordon node) ];
  units = [ unit ];
  checks = text.optional group.isControlPlane (controlPlaneServes node);
}
