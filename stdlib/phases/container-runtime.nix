# Phase "container-runtime" (Kubespray roles container-engine/containerd, runc, crictl):
# the containerd, shim, ctr, runc and crictl binaries, /etc/containerd/config.toml in
# the schema of the deployed containerd version, registry hosts.toml files, the proxy
# drop-in, /etc/crictl.yaml and containerd.service. Nodes that run no kubelet (etcd-only)
# get nothing, as in Kubespray.
ctx: group:
let
  lib = import ../lib;
  artifacts = import ../artifacts.nix;
  tpl = import ../templates/containerd.nix;
  inherit (lib) records text;
  inherit (builtins) attrNames map concatMap filter;
  s = group.settings;
  cs = ctx.settings;
  bin = cs.paths.binDir;
  versions = ctx.versions // {
    containerd = s.containerd.version;
    runc = s.runc.version;
    crictl = if s.crictl.version == null then ctx.versions.defaultCrictl else s.crictl.version;
  };
  socket = "unix:///var/run/containerd/containerd.sock";

  binaries = concatMap (artifacts.files s versions) [ "containerd" "containerd-shim-runc-v2" "ctr" "runc" "crictl" ];
  config = tpl.configToml { inherit s ctx; binDir = bin; };
  prefixes = attrNames s.containerd.registryMirrors;
  hostsFiles = map
    (p: records.file { path = "/etc/containerd/certs.d/${p}/hosts.toml"; mode = "0640"; text = tpl.hostsToml p s.containerd.registryMirrors.${p}; })
    prefixes;

  proxied = cs.proxy.http != null || cs.proxy.https != null;
  noProxy =
    if cs.proxy.noProxy != null then cs.proxy.noProxy
    else builtins.concatStringsSep "," ([ "localhost" "127.0.0.1" cs.network.serviceCIDR cs.network.podCIDR ".${cs.dns.domain}" ]
      ++ map (n: n.address) ctx.nodes);
  proxyFiles = text.optional proxied (records.textFile "/etc/systemd/system/containerd.service.d/http-proxy.conf"
    (tpl.proxyDropIn { http = cs.proxy.http; https = cs.proxy.https; inherit noProxy; }));

  configFile = records.file { path = "/etc/containerd/config.toml"; mode = "0640"; text = config.text; };
  restartOn = map (f: f.path) ([ configFile ] ++ hostsFiles ++ proxyFiles ++ filter (f: f.path != "${bin}/crictl") binaries);
in
if !group.isK8s then { }
else {
  directories = map (path: records.directory { inherit path; })
    ([ "/etc/containerd" "/etc/containerd/certs.d" ]
      ++ map (p: "/etc/containerd/certs.d/${p}") prefixes
      ++ text.optional proxied "/etc/systemd/system/containerd.service.d");

  files = binaries ++ [ configFile ] ++ hostsFiles ++ proxyFiles
    ++ [ (records.textFile "/etc/crictl.yaml" (tpl.crictlYaml socket)) ];

  units = [
    (records.unit {
      name = "containerd.service";
      text = tpl.unit { inherit s; binDir = bin; };
      onChange = "restart";
      enable = true;
      restartTriggers = restartOn;
    })
  ];

  # Reset (Kubespray reset.yml): kill every container, stop containerd, unmount what
  # it mounted and remove its storage and state.
  hooks = [
    (records.hook {
      name = "containerd-reset";
      when = "reset";
      run = text.lines [
        "if systemctl is-active --quiet containerd.service; then"
        "  for ns in $(${bin}/ctr namespaces ls -q); do"
        "    for t in $(${bin}/ctr -n \"$ns\" tasks ls -q); do ${bin}/ctr -n \"$ns\" tasks kill -s SIGKILL \"$t\"; ${bin}/ctr -n \"$ns\" tasks delete -f \"$t\"; done"
        "  done"
        "fi"
        "systemctl stop containerd.service || exit 1"
        # a shim outlives containerd by design (containers survive its restarts); a reset
        # ends the ones this containerd started, named by its socket (the pattern is
        # anchored at the program's name: this script's own command line holds it too)
        "shims='^[^ ]*containerd-shim[^ ]* .*-address /run/containerd/containerd.sock'"
        "pkill -KILL -f -- \"$shims\" || true"
        "for _ in $(seq 50); do pgrep -f -- \"$shims\" >/dev/null || break; sleep 0.1; done"
        "! pgrep -f -- \"$shims\" >/dev/null || { echo 'containerd shims survive SIGKILL' >&2; exit 1; }"
        "for m in $(awk '$2 ~ \"^(${s.containerd.storageDir}|${s.containerd.stateDir})/\" { print $2 }' /proc/mounts | sort -r); do"
        "  umount \"$m\" || umount -l \"$m\" || exit 1"
        "done"
        # a dedicated disk mounted at the storage directory stays mounted: only what is on it goes
        "if mountpoint -q ${s.containerd.storageDir}; then find ${s.containerd.storageDir} -mindepth 1 -xdev -delete || exit 1; else rm -rf -- ${s.containerd.storageDir}; fi"
        "rm -rf -- ${s.containerd.stateDir}"
        # the directories containerd makes for its `opt` plugin at start: only while empty
        "for d in /opt/containerd/bin /opt/containerd/lib /opt/containerd; do rmdir -- \"$d\" 2>/dev/null || true; done"
      ];
    })
  ];

  checks = [
    (records.check {
      name = "containerd-running";
      run = "systemctl is-active --quiet containerd.service && test -S /run/containerd/containerd.sock";
      retries = 10;
      delay = 2;
    })
  ];
}
