# The complete option tree: every setting a cluster, role or node can define, gathered
# from options/decls/*.nix, plus the resolution functions of options/eval.nix.
let
  eval = import ./eval.nix;
  t = import ./types.nix;
  versions = import ../versions.nix;
  phaseNames = (import ../phases/order.nix).order;
  components = (import ../artifacts.nix).componentNames;
  args = { opt = eval.mkOption; inherit t versions phaseNames components; };
  load = f: import f args;
  decl =
    load ./decls/kubernetes.nix
    // load ./decls/network.nix
    // load ./decls/etcd.nix
    // load ./decls/runtime.nix
    // load ./decls/kubelet.nix
    // load ./decls/dns.nix
    // load ./decls/node.nix
    // load ./decls/deploy.nix
    // load ./decls/custom.nix;
in
{
  inherit decl eval;
  types = t;
  defaults = eval.defaults decl;
  list = eval.list decl;
}
