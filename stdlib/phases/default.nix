# The phase table: phase order (order.nix) and one module per phase. A module is a
# function `ctx: node: content` returning any of { files; directories; units; hooks;
# checks; } (lists); `build` turns it into the uniform phase record of the closure.
let
  records = (import ../lib).records;
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
  build = name: ctx: node:
    { inherit name; activate = ctx.active name; } // records.merge [ (modules.${name} ctx node) ];
}
