# The phase table: phase order (order.nix) and one module per phase. A module is a
# function `ctx: group: content`, or `ctx: group: node: content` when some of the
# content depends on the node's own name or address, returning any of { files;
# directories; units; hooks; checks; } (lists). A group is what nodes with the same
# roles and settings share ({ settings; roles; isControlPlane; isEtcd; isWorker;
# isK8s; isFirstControlPlane; example; }, see cluster.nix): what a module computes
# from the group is computed once for all of its nodes, which is what keeps a
# thousand-node cluster cheap to evaluate. `build` turns a module's content into the
# uniform phase record of the closure, with the user's own content of the phase
# (custom.nix) after the module's.
# `orderWith` places the user's own phases (settings custom.phases) in an order.
let
  inherit (builtins) attrNames concatMap concatStringsSep elem filter head;
  inherit (import ../lib) records errors;
  custom = import ./custom.nix;
  inherit (import ./order.nix) order upgradeOrder;
  modules = {
    preinstall = import ./preinstall.nix;
    container-runtime = import ./container-runtime.nix;
    download = import ./download.nix;
    etcd = import ./etcd.nix;
    kubelet = import ./kubelet.nix;
    control-plane = import ./control-plane.nix;
    cni = import ./cni.nix;
    addons = import ./addons.nix;
    resolvconf = import ./resolvconf.nix;
  };
in
{
  inherit order upgradeOrder modules;
  # The phase `name` of every node of `group`, as a function of the node.
  build = name: ctx: group:
    let
      content = if modules ? ${name} then modules.${name} ctx group else { };
      head = { inherit name; activate = ctx.active name; selfRollback = ctx.selfRollback name; };
      own = custom name group;
      shared = head // records.merge [ content own ];
    in
    if builtins.isFunction content then node: head // records.merge [ (content node) own ]
    else _node: shared;

  # `base` with each custom phase right after the phase it names (siblings in name
  # order, a custom phase may follow another).
  # `at name`: where the user placed phase `name`, for errors.
  orderWith = phases: at: base:
    let
      names = attrNames phases;
      after = p: filter (n: phases.${n}.after == p) names;
      expand = p: [ p ] ++ concatMap expand (after p);
      result = concatMap expand base;
      clash = filter (n: elem n base) names;
      lost = filter (n: !(elem n result)) names;
    in
    if clash != [ ] then
      errors.fail "custom.phases.${head clash} (at ${at (head clash)}): '${head clash}' is one of kdeploy's phases; give yours another name"
    else if lost != [ ] then
      errors.fail "custom.phases.${head lost} (at ${at (head lost)}): placed after '${phases.${head lost}.after}', which is not a phase before it (phases: ${concatStringsSep ", " result})"
    else result;
}
