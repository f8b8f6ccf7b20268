# kdeploy's standard library, reachable as <kdeploy>. Entry points:
#   kd.cluster { name; nodes; settings?; roleSettings?; }  -> the cluster closure value
#   kd.inventory { ... }                                    -> nodes with Kubespray's roles
#   kd.mkDefault / kd.mkForce / kd.mkOverride               -> setting priorities
#   kd.options                                              -> every option as plain data
#   kd.phaseOrder, kd.versions, kd.lib                      -> data and helpers
let
  lib = import ./lib;
  options = import ./options;
  phases = import ./phases;
in
{
  cluster = import ./cluster.nix;
  inventory = import ./inventory.nix;

  inherit (options.eval) mkOverride mkDefault mkForce;
  options = options.list;
  phaseOrder = phases.order;
  versions = import ./versions.nix;
  addressRange = lib.ip.range;
  inherit lib;
}
