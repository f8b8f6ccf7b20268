# Phase "control-plane" (Kubespray roles kubernetes/control-plane and kubernetes/kubeadm):
# kubeadm configuration files, the pushed kubeadm secrets, and guarded hooks:
#   first control plane   kubeadm init            unless /etc/kubernetes/admin.conf exists
#   other control planes  kubeadm join --control-plane (retried until the first is up)
#   workers               kubeadm join, then point kubelet.conf at the API load balancer
#                         (a former control plane first leaves: drain, delete, kubeadm reset)
# and checks that the API answers (control planes) or the kubelet joined (workers).
# When kubernetes.version changes (the engine runs this phase before the kubelets then),
# the anchor runs kubeadm upgrade apply first, alone, and every other control plane
# kubeadm upgrade node after it, one at a time (kubeadm's upgrade procedure).
ctx: group:
let
  lib = import ../lib;
  tpl = import ../templates/kubeadm.nix;
  inherit (lib) records text;
  inherit (builtins) concatStringsSep length;
  cs = ctx.settings;
  bin = cs.paths.binDir;
  kubeadm = "${bin}/kubeadm";
  kubectl = "${bin}/kubectl --kubeconfig=/etc/kubernetes/admin.conf";
  multiCP = length ctx.controlPlanes > 1;

  # The user's own file (relative: project file, absolute: deployer file), read and sent
  # as a secret (secretFile: never stored, cached or printed in clear), else a secret
  # kdeploy makes and keeps on the deployer (../secrets.nix).
  made = import ../secrets.nix ctx;
  secretSource = p: made: if p == null then { secret = made; } else { secretFile = p; };
  secret = path: p: made: records.file ({ inherit path; mode = "0600"; } // secretSource p made);
  made' = file: mode: s: records.file { path = file; inherit mode; secret = s; };
  caFiles = text.optionals group.isFirstControlPlane [
      (made' "/etc/kubernetes/ssl/ca.crt" "0644" made.kubernetesCA.cert)
      (made' "/etc/kubernetes/ssl/ca.key" "0600" made.kubernetesCA.key)
    ];
  secretFiles =
    [ (secret "/etc/kubernetes/kdeploy/kubeadm-token" cs.kubeadm.tokenFile made.kubeadmToken)
      (made' "/etc/kubernetes/kdeploy/ca-pin" "0644" made.kubernetesCA.pin) ]
    ++ caFiles
    ++ text.optional (group.isControlPlane && multiCP)
      (secret "/etc/kubernetes/kdeploy/kubeadm-certificate-key" cs.kubeadm.certificateKeyFile made.certificateKey);

  initFile = "/etc/kubernetes/kubeadm-config.yaml";
  cpJoinFile = "/etc/kubernetes/kubeadm-controlplane.yaml";
  joinFile = "/etc/kubernetes/kubeadm-client.conf";

  # Retry a join while the first control plane comes up in the same phase; a failed
  # attempt is reset so the next one starts clean. An API server whose CA is not the
  # pinned one is not a transient failure: refused at once.
  joinScript = file: extra: ''
    set -eu
    ${tpl.renderSecrets}
    kd_render ${file} /run/kdeploy/kubeadm-join.yaml
    i=0
    until ${kubeadm} join --config=/run/kdeploy/kubeadm-join.yaml${extra} 2>/run/kdeploy/kubeadm-join.err; do
      cat /run/kdeploy/kubeadm-join.err >&2
      if grep -q 'none of the public keys' /run/kdeploy/kubeadm-join.err; then
        echo "kdeploy: the API server's CA is not the one kdeploy pinned (caCertHashes): refusing to join" >&2
        exit 1
      fi
      i=$((i + 1))
      if [ "$i" -ge 30 ]; then echo "kdeploy: kubeadm join failed 30 times" >&2; exit 1; fi
      ${kubeadm} reset -f >/dev/null 2>&1 || true
      sleep 10
    done
    rm -f /run/kdeploy/kubeadm-join.yaml
  '';

  # After joining through the first control plane, talk to the API load balancer.
  lbEndpoint = ctx.api.endpointForWorkers;
  useLB = lbEndpoint != "https://${ctx.api.controlPlaneEndpoint}";
  pointKubeletAtLB = ''
    ${tpl.setServer}
    kd_set_server /etc/kubernetes/kubelet.conf ${lbEndpoint}
    systemctl restart kubelet.service
  '';
  # Joined control planes use their own API server rather than the first one.
  pointAtLocalAPI = ''
    ${tpl.setServer}
    kd_set_server /etc/kubernetes/kubelet.conf https://127.0.0.1:${toString ctx.api.port}
    kd_set_server /etc/kubernetes/admin.conf https://127.0.0.1:${toString ctx.api.port}
    systemctl restart kubelet.service
  '';

  # kdeploy makes the cluster's CA; a CA already on the first control plane that kdeploy
  # did not put there (a cluster kubeadm set up before) is never replaced under it.
  foreignCAHook = records.hook {
    name = "refuse-foreign-ca";
    when = "pre";
    undo.nothing = "a check: it changes nothing";
    run = "echo 'kdeploy: /etc/kubernetes/ssl/ca.crt is a CA kdeploy did not make (a cluster set up without kdeploy?); replacing it would cut every node off: refusing' >&2; exit 1";
    unless = "test ! -e /etc/kubernetes/ssl/ca.crt || test -L /etc/kubernetes/ssl/ca.crt";
  };

  # disrupts: the anchor goes first and alone, the other control planes then join one
  # at a time (Kubespray joins control planes with throttle 1).
  initHook = records.hook {
    name = "kubeadm-init";
    disrupts = true;
    undo.by = "kubeadm-reset";
    run = ''
      set -eu
      ${noteMadeDirs}
      ${tpl.renderSecrets}
      kd_render ${initFile} /run/kdeploy/kubeadm-config.yaml
      ${kubeadm} init --config=/run/kdeploy/kubeadm-config.yaml --skip-phases=${concatStringsSep "," (tpl.skipPhases ctx)}${text.optionalString multiCP " --upload-certs"}
      rm -f /run/kdeploy/kubeadm-config.yaml
    '';
    unless = "test -f /etc/kubernetes/admin.conf";
  };

  # kube-proxy's kubeconfig (a ConfigMap) names the first control plane; with a localhost
  # load balancer on the same port, every node can use https://localhost:<port> instead.
  proxyServer = "https://localhost:${toString ctx.api.lbPort}";
  kubeProxyHook = records.hook {
    name = "kube-proxy-via-localhost";
    undo.nothing = "edits kube-proxy's ConfigMap in the cluster's API, no file of the node";
    run = ''
      set -eu
      ${kubectl} -n kube-system get configmap kube-proxy -o yaml > /run/kdeploy/kube-proxy.yaml
      while IFS= read -r l || [ -n "$l" ]; do
        case $l in *"server: https://"*) l="''${l%%server: *}server: ${proxyServer}" ;; esac
        printf '%s\n' "$l"
      done < /run/kdeploy/kube-proxy.yaml | ${kubectl} replace -f -
      ${kubectl} -n kube-system rollout restart daemonset kube-proxy
      rm -f /run/kdeploy/kube-proxy.yaml
      ${waitKubeProxy}
    '';
    unless = "${kubectl} -n kube-system get configmap kube-proxy -o yaml | { while IFS= read -r l; do case $l in *\"server: ${proxyServer}\"*) exit 0 ;; esac; done; exit 1; }";
  };
  # Until every kube-proxy runs again, a node's Service rules lag behind: a replica that
  # a drain stops meanwhile is still sent calls (refused). Upgrades drain right after.
  waitKubeProxy = "${kubectl} -n kube-system rollout status daemonset/kube-proxy --timeout=300s";
  kubeProxyViaLocalhost = ctx.api.localLB && !cs.kubeProxy.remove && ctx.api.lbPort == ctx.api.port;

  version = "v${ctx.versions.kube}";
  # kubeadm's UpgradeConfiguration (v1beta4): etcd is kdeploy's (external to kubeadm), so
  # kubeadm leaves it alone; certificates are renewed as Kubespray's
  # kubeadm_upgrade_auto_cert_renewal does by default; the phases kdeploy skipped at
  # init stay skipped (kubeadm would otherwise replace kdeploy's CoreDNS when the last
  # control plane is upgraded).
  upgradeFile = "/etc/kubernetes/kubeadm-upgrade.yaml";
  skipped = "[ ${concatStringsSep ", " (tpl.skipPhases ctx)} ]";
  # The preflight errors the user ignores at init and join, ignored by the upgrade's
  # too; and kubeadm's checks of a CoreDNS it does not manage (addon/coredns skipped:
  # CoreDNS is the addons phase's, and kubeadm refuses a version newer than it knows).
  ignored = [ "  ignorePreflightErrors: ${builtins.toJSON
    (cs.kubeadm.ignorePreflightErrors ++ [ "CoreDNSMigration" "CoreDNSUnsupportedPlugins" ])}" ];
  upgradeConfig = text.lines ([
    "apiVersion: kubeadm.k8s.io/v1beta4"
    "kind: UpgradeConfiguration"
    "apply:"
    "  kubernetesVersion: ${version}"
    "  etcdUpgrade: false"
    "  certificateRenewal: true"
    "  allowExperimentalUpgrades: true"
    "  skipPhases: ${skipped}"
  ] ++ ignored ++ [
    "node:"
    "  etcdUpgrade: false"
    "  certificateRenewal: true"
    "  skipPhases: ${skipped}"
  ] ++ ignored);
  upgradeApplyHook = records.hook {
    name = "kubeadm-upgrade-apply";
    upgrade = true;
    undo.by = "kubeadm-reset";
    # kubeadm rolls kube-proxy to the new version: the drains wait for it
    run = "${kubeadm} upgrade apply --yes --config=${upgradeFile}"
      + text.optionalString (!cs.kubeProxy.remove) " && ${waitKubeProxy}";
    unless = "${kubectl} get --raw /version | grep -q '\"gitVersion\": *\"${version}\"'";
  };
  upgradeNodeHook = records.hook {
    name = "kubeadm-upgrade-node";
    upgrade = true;
    undo.by = "kubeadm-reset";
    run = "${kubeadm} upgrade node --config=${upgradeFile}";
    unless = "grep -q 'kube-apiserver:${version}$' /etc/kubernetes/manifests/kube-apiserver.yaml";
  };

  # Reset (Kubespray reset.yml, remove-node.yml): kubeadm reset (static pods, kubelet
  # config, PKI, stacked etcd membership), after the node has left (./leave.nix: drained
  # and deleted). Skipped on a node kubeadm never set up.
  leave = import ./leave.nix ctx group;
  leaveHooks = node: text.optionals (leave.phase == "control-plane") (leave.hooks node);
  drainAndDelete = node: map (l: "  " + l) (leave.drainAndDelete node.name);
  # The API server's and controller manager's static pods mount /etc/ssl/certs, which the
  # kubelet creates when the node has none (kubeadm's DirectoryOrCreate) and kubeadm reset
  # leaves. Before a control plane is set up, which of /etc/ssl/certs and /etc/ssl the node
  # lacks is written down; its reset removes those, when empty, and nothing else (a node
  # whose image has them keeps them).
  madeDirs = "/etc/kubernetes/kdeploy-made-dirs";
  noteMadeDirs = "[ -e ${madeDirs} ] || { mkdir -p /etc/kubernetes && "
    + "for d in /etc/ssl/certs /etc/ssl; do [ -e $d ] || echo $d; done > ${madeDirs}; }";
  kubeadmReset = [
    "made=$(cat ${madeDirs} 2>/dev/null || true)"
    "${kubeadm} reset -f --cri-socket=unix:///var/run/containerd/containerd.sock || exit 1"
    "rm -rf /root/.kube"
    "for d in $made; do rmdir $d 2>/dev/null || true; done"
    "rm -f ${madeDirs}"
  ];
  resetHook = records.hook {
    name = "kubeadm-reset";
    when = "reset";
    run = text.lines kubeadmReset;
    unless = "test ! -e /etc/kubernetes/kubelet.conf && test ! -e /etc/kubernetes/admin.conf";
  };

  # A control plane whose role was dropped (it stays a worker): it leaves as Kubespray's
  # remove-node.yml would (drain, delete the node, kubeadm reset), with its own admin
  # credentials, then the join below brings it back as a worker. One at a time.
  leaveControlPlaneHook = node: records.hook {
    name = "leave-control-plane";
    when = "pre";
    undo.nothing = "undoes a control plane itself (kubeadm reset); the worker's join after it is undone by kubeadm-reset";
    # kubeadm reset empties /etc/kubernetes/manifests, where the worker's kubelet phase
    # has just linked the API load balancer's static pod: kdeploy's links are kept, and
    # put back however the script ends.
    run = text.lines ([ "if [ -f /etc/kubernetes/admin.conf ]; then" ] ++ drainAndDelete node ++ [
      "fi"
      "keep=/run/kdeploy/kept-manifests; mkdir -p $keep"
      "restore() {"
      "  mkdir -p /etc/kubernetes/manifests"
      "  for f in $keep/*; do if [ -L \"$f\" ]; then mv \"$f\" /etc/kubernetes/manifests/; fi; done"
      "  rmdir $keep"
      "}"
      "trap restore EXIT"
      "for f in /etc/kubernetes/manifests/*; do"
      "  case $(readlink \"$f\") in /var/lib/kdeploy/*) mv \"$f\" $keep/ ;; esac"
      "done"
    ] ++ kubeadmReset);
    unless = "test ! -e /etc/kubernetes/manifests/kube-apiserver.yaml";
  };
  cpJoinConfig = tpl.joinConfig { inherit ctx; controlPlane = true; };
  workerJoinConfig = tpl.joinConfig { inherit ctx; controlPlane = false; };
  workerJoinHook = records.hook {
    name = "kubeadm-join";
    undo.by = "kubeadm-reset";
    run = joinScript joinFile "" + text.optionalString useLB pointKubeletAtLB;
    unless = "test -f /etc/kubernetes/kubelet.conf";
  };
in
if !group.isK8s then { }
else if group.isControlPlane then node: {
  directories = [ (records.directory { path = "/etc/kubernetes/kdeploy"; mode = "0700"; }) ];
  files = secretFiles ++ [
    (records.file { path = initFile; mode = "0640"; text = tpl.initConfig { inherit ctx node; }; })
    (records.file { path = upgradeFile; mode = "0640"; text = upgradeConfig; })
    (records.textFile "/etc/kubernetes/kubescheduler-config.yaml" (tpl.schedulerConfig { inherit ctx; }))
  ] ++ text.optional (!group.isFirstControlPlane)
    (records.file { path = cpJoinFile; mode = "0640"; text = cpJoinConfig node; });
  hooks =
    (if group.isFirstControlPlane then [ foreignCAHook initHook upgradeApplyHook ]
    else [
      (records.hook {
        name = "kubeadm-join-control-plane";
        disrupts = true;
        undo.by = "kubeadm-reset";
        run = noteMadeDirs + "\n" + joinScript cpJoinFile "" + pointAtLocalAPI;
        unless = "test -f /etc/kubernetes/admin.conf";
      })
      upgradeNodeHook
    ])
    # on every control plane: the kubeadm upgrade that finishes the last one re-renders
    # kube-proxy's kubeconfig with a control plane's address
    ++ text.optional kubeProxyViaLocalhost kubeProxyHook
    ++ leaveHooks node ++ [ resetHook ];
  checks = [
    (records.check {
      name = "apiserver-ready";
      run = "${kubectl} get --raw=/readyz >/dev/null";
      retries = 60;
      delay = 5;
    })
  ];
}
else node: {
  directories = [ (records.directory { path = "/etc/kubernetes/kdeploy"; mode = "0700"; }) ];
  files = secretFiles ++ [
    (records.file { path = joinFile; mode = "0640"; text = workerJoinConfig node; })
  ];
  hooks = [ (leaveControlPlaneHook node) workerJoinHook ] ++ leaveHooks node ++ [ resetHook ];
  checks = [
    (records.check {
      name = "kubelet-joined";
      run = "test -f /etc/kubernetes/kubelet.conf && systemctl is-active --quiet kubelet.service";
      retries = 60;
      delay = 5;
    })
  ];
}
