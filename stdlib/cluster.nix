# kd.cluster: checks the user's cluster definition, resolves settings (cluster, role,
# node, with priorities), validates the whole, and builds each node's closure: one
# entry per phase in phase order. The result is plain JSON-able data.
args:
let
  lib = import ./lib;
  options = import ./options;
  phases = import ./phases;
  validate = import ./validate.nix;
  inherit (lib) errors text;
  inherit (builtins) attrNames isAttrs isList isString filter map head length elem concatStringsSep
    listToAttrs sort lessThan match stringLength concatMap groupBy attrValues seq deepSeq;
  where = errors.where;

  knownArgs = [ "name" "nodes" "settings" "roleSettings" ];
  knownNodeAttrs = [ "address" "roles" "settings" "ssh" "tags" ];
  knownRoles = [ "control-plane" "etcd" "worker" ];

  checkArgs =
    let unknown = filter (k: !(elem k knownArgs)) (attrNames args); in
    if !(isAttrs args) then errors.fail "kd.cluster expects an attribute set { name; nodes; settings?; roleSettings?; }"
    else if unknown != [ ] then
      errors.fail "kd.cluster: unknown attribute '${head unknown}' (at ${where (head unknown) args}).${errors.didYouMean (head unknown) knownArgs} Known: ${concatStringsSep ", " knownArgs}."
    else if !(args ? name) then errors.fail "kd.cluster: the cluster needs a `name`"
    else if !(isString args.name) || match "[a-z0-9]([-a-z0-9]*[a-z0-9])?" args.name == null then
      errors.fail "kd.cluster: name must be a DNS-1123 label (lower case letters, digits, '-'), got ${builtins.toJSON args.name} (at ${where "name" args})"
    else if !(args ? nodes) || !(isAttrs args.nodes) || args.nodes == { } then
      errors.fail "kd.cluster: `nodes` must be a non-empty attribute set of nodes (at ${if args ? nodes then where "nodes" args else where "name" args})"
    else if (args ? settings) && !(isAttrs args.settings) then
      errors.fail "kd.cluster: `settings` must be an attribute set (at ${where "settings" args})"
    else if (args ? roleSettings) && !(isAttrs args.roleSettings) then
      errors.fail "kd.cluster: `roleSettings` must be an attribute set of roles (at ${where "roleSettings" args})"
    else true;

  userSettings = args.settings or { };
  roleSettings = args.roleSettings or { };
  nodesIn = args.nodes;

  checkRoleSettings =
    let unknown = filter (r: !(elem r knownRoles)) (attrNames roleSettings); in
    if unknown != [ ] then
      errors.fail "roleSettings: unknown role '${head unknown}' (at ${where (head unknown) roleSettings}).${errors.didYouMean (head unknown) knownRoles} Roles: ${concatStringsSep ", " knownRoles}."
    else true;

  # Natural order: node2 before node10.
  sortKey = n:
    let m = match "(.*[^0-9])?([0-9]*)" n; p = head m; d = builtins.elemAt m 1; in
    { prefix = if p == null then "" else p; digits = d; inherit n; };
  natLess = a: b:
    if a.prefix != b.prefix then lessThan a.prefix b.prefix
    else if stringLength a.digits != stringLength b.digits then stringLength a.digits < stringLength b.digits
    else if a.digits != b.digits then lessThan a.digits b.digits
    else lessThan a.n b.n;
  nodeNames = map (k: k.n) (sort natLess (map sortKey (attrNames nodesIn)));

  # ---- settings ------------------------------------------------------------------
  decl = options.decl;
  clusterDef = options.eval.mkDef {
    value = userSettings; label = "settings"; level = 0;
    pos = if args ? settings then builtins.unsafeGetAttrPos "settings" args else null;
  };
  clusterSettings = options.eval.resolve { inherit decl; fresh = [ clusterDef ]; base = options.defaults; };

  roleDef = r: options.eval.mkDef {
    value = roleSettings.${r}; label = "roleSettings.${r}"; level = 1;
    pos = builtins.unsafeGetAttrPos r roleSettings;
  };
  roleDefsFor = roles: map roleDef (filter (r: roleSettings ? ${r}) roles);
  comboKey = roles: concatStringsSep "+" (sort lessThan (filter (r: roleSettings ? ${r}) roles));

  nodeRoles = nm: nodesIn.${nm}.roles or [ ];
  combos = listToAttrs (map
    (nm:
      let roles = nodeRoles nm; in
      {
        name = comboKey roles;
        value = if roleDefsFor roles == [ ] then clusterSettings
          else options.eval.resolve { inherit decl; seen = [ clusterDef ]; fresh = roleDefsFor roles; base = clusterSettings; };
      })
    nodeNames);

  nodeDefs = nm:
    let n = nodesIn.${nm}; in
    (if n ? settings then [
      (options.eval.mkDef { value = n.settings; label = "nodes.${nm}.settings"; level = 2; pos = builtins.unsafeGetAttrPos "settings" n; })
    ] else [ ])
    ++ (if n ? ssh then [
      (options.eval.mkDef { value = { ssh = n.ssh; }; label = "nodes.${nm}"; level = 2; pos = builtins.unsafeGetAttrPos "ssh" n; })
    ] else [ ]);

  settingsOf = nm:
    let roles = nodeRoles nm; defs = nodeDefs nm; base = combos.${comboKey roles}; in
    if defs == [ ] then base
    else options.eval.resolve { inherit decl; seen = [ clusterDef ] ++ roleDefsFor roles; fresh = defs; inherit base; };

  # ---- nodes -----------------------------------------------------------------------
  checkNode = nm:
    let
      n = nodesIn.${nm};
      at = where nm nodesIn;
      unknown = filter (k: !(elem k knownNodeAttrs)) (attrNames n);
      roles = n.roles or null;
      badRoles = filter (r: !(elem r knownRoles)) roles;
      tags = n.tags or [ ];
      tagRe = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";
      badTags = filter (t: !(isString t) || match tagRe t == null) tags;
    in
    if !(isAttrs n) then errors.fail "node '${nm}' must be an attribute set { address; roles; settings?; ssh?; } (at ${at})"
    else if unknown != [ ] then
      errors.fail "node '${nm}': unknown attribute '${head unknown}' (at ${where (head unknown) n}).${errors.didYouMean (head unknown) knownNodeAttrs} Known: ${concatStringsSep ", " knownNodeAttrs}."
    else if !(n ? address) then errors.fail "node '${nm}' has no `address` (at ${at})"
    else if lib.ip.parse n.address == null then
      errors.fail "node '${nm}': address ${builtins.toJSON n.address} is not an IPv4 address (at ${where "address" n})"
    else if !(isList roles) then errors.fail "node '${nm}': `roles` must be a list of ${concatStringsSep ", " knownRoles} (at ${if n ? roles then where "roles" n else at})"
    else if roles == [ ] then errors.fail "node '${nm}' has no roles; give it some of: ${concatStringsSep ", " knownRoles} (at ${where "roles" n})"
    else if badRoles != [ ] then
      errors.fail "node '${nm}': unknown role ${builtins.toJSON (head badRoles)} (at ${where "roles" n}).${errors.didYouMean (head badRoles) knownRoles} Roles: ${concatStringsSep ", " knownRoles}."
    else if !(isList tags) then errors.fail "node '${nm}': `tags` must be a list of names (at ${where "tags" n})"
    else if badTags != [ ] then
      errors.fail "node '${nm}': tag ${builtins.toJSON (head badTags)} is not a name of lower-case letters, digits and '-' (at ${where "tags" n}); select tagged nodes with --on @TAG"
    else true;

  mkNode = nm:
    let
      n = nodesIn.${nm};
      s = settingsOf nm;
      has = r: elem r n.roles;
    in
    seq (checkNode nm) {
      name = nm;
      inherit (n) address roles;
      tags = n.tags or [ ];
      settings = s;
      isControlPlane = has "control-plane";
      isEtcd = has "etcd";
      isWorker = has "worker";
      isK8s = has "control-plane" || has "worker";
      etcdMemberName = if s.etcd.memberName == null then nm else s.etcd.memberName;
      pos = builtins.unsafeGetAttrPos nm nodesIn;
      addressPos = builtins.unsafeGetAttrPos "address" n;
    };

  nodeList = map mkNode nodeNames;

  ctx = import ./context.nix { name = args.name; settings = clusterSettings; nodes = nodeList; };

  checks = validate { inherit args ctx nodeList userSettings; };

  phaseOrder = phases.orderWith clusterSettings.custom.phases customPhaseAt phases.order;
  customPhaseAt = name:
    let p = errors.posIn userSettings [ "custom" "phases" name ]; in
    errors.fmtPos (if p == null then builtins.unsafeGetAttrPos "settings" args else p);

  # Where a node's setting was defined: its own settings, its roles', the cluster's.
  nodeSettingPos = node: path:
    let
      n = nodesIn.${node.name};
      sets = [ (n.settings or { }) ] ++ map (r: roleSettings.${r}) (filter (r: roleSettings ? ${r}) node.roles) ++ [ userSettings ];
      found = filter (p: p != null) (map (set: errors.posIn set path) sets);
    in
    if found == [ ] then node.pos else head found;

  # Every custom entry of a node names a phase of the order.
  checkCustomPhases = node:
    let
      c = node.settings.custom;
      bad = concatMap (kind: map (k: { inherit kind k; p = c.${kind}.${k}.phase; })
        (filter (k: !(elem c.${kind}.${k}.phase phaseOrder)) (attrNames c.${kind})))
        [ "files" "units" "hooks" "checks" ];
      b = head bad;
    in
    if bad == [ ] then true
    else errors.fail "node '${node.name}': custom.${b.kind}.\"${b.k}\" (at ${errors.fmtPos (nodeSettingPos node [ "custom" b.kind b.k ])}): phase '${b.p}' is not a phase.${errors.didYouMean b.p phaseOrder} Phases: ${concatStringsSep ", " phaseOrder} (add your own in custom.phases)";

  # Nodes with the same roles and the same settings object form a group, and share the
  # work of their phases (phases/default.nix): a node with settings or ssh of its own,
  # and the first control plane, are groups of one.
  isFirst = node: ctx.firstControlPlane != null && ctx.firstControlPlane.name == node.name;
  groupKey = node:
    concatStringsSep "+" (sort lessThan node.roles)
    + (if nodeDefs node.name != [ ] then "@${node.name}" else "")
    + (if isFirst node then "!" else "");
  groupOf = node: {
    inherit (node) settings roles isControlPlane isEtcd isWorker isK8s;
    isFirstControlPlane = isFirst node;
    example = node.name;
  };
  groupPhases = listToAttrs (map
    (node: { name = groupKey node; value = map (p: phases.build p ctx (groupOf node)) phaseOrder; })
    nodeList);

  # How the engine batches this node's disrupting steps: its most stateful role
  # names its group, settings.rollout the group's batch size.
  rolloutOf = node:
    let r = clusterSettings.rollout; has = role: elem role node.roles; in
    if has "etcd" then { group = "etcd"; serial = r.etcd; }
    else if has "control-plane" then { group = "control-plane"; serial = r.controlPlane; }
    else { group = "workers"; serial = r.workers; };

  nodeOut = node:
    let
      s = node.settings;
      n = node // { isFirstControlPlane = isFirst node; };
    in
    {
      inherit (node) address roles tags;
      rollout = rolloutOf node;
      ssh = { inherit (s.ssh) user port key jumpHost become; };
      phases = seq (checkCustomPhases node) (map (phase: phase n) groupPhases.${groupKey node});
      settings = s;
    };

  result = {
    memberships = import ./membership.nix ctx nodeList;
    # the node whose control-plane phase runs `kubeadm init`; the engine records it
    anchor = if ctx.firstControlPlane == null then null else ctx.firstControlPlane.name;
    anchorCandidates = map (n: n.name) ctx.controlPlanes;
    anchorPinned = clusterSettings.kubeadm.initNode != null;
    # how a node removed without being reached (it does not answer `switch --prune`)
    # leaves the Kubernetes API: run by the engine on the first of `on` it holds, with
    # KDEPLOY_NODE_NAME set; none without an active control plane
    removeNode =
      if ctx.controlPlanes == [ ] || !(ctx.active "control-plane") then null
      else {
        on = map (n: n.name) ctx.controlPlanes;
        run = "${clusterSettings.paths.binDir}/kubectl --kubeconfig=/etc/kubernetes/admin.conf delete node \"$KDEPLOY_NODE_NAME\" --ignore-not-found --wait=false";
      };
    kubernetesVersion = clusterSettings.kubernetes.version;
    name = args.name;
    proxy = { inherit (clusterSettings.proxy) http https noProxy; };
    transferCache = clusterSettings.transfer.cache;
    schemaVersion = 1;
    inherit phaseOrder;
    upgradePhaseOrder = phases.orderWith clusterSettings.custom.phases customPhaseAt phases.upgradeOrder;
    nodes = listToAttrs (map (n: { name = n.name; value = nodeOut n; }) nodeList);
    settings = clusterSettings;
    warnings = checks.warnings;
  };
in
# Everything is checked before the result is returned: cluster-wide settings first (so
# their errors come before per-node ones), then every node's settings, then the rules.
seq checkArgs (seq checkRoleSettings (deepSeq clusterSettings
  (deepSeq (map (n: n.settings) nodeList) (seq checks.ok result))))
