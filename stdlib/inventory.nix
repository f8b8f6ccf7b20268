# kd.inventory: name hosts and give them roles with the rules of Kubespray's inventory
# builder (contrib/inventory_builder/inventory.py):
#   - hosts are named <prefix>1, <prefix>2, ... in address order;
#   - etcd on the first 3 hosts when there are at least 3, else on the first one;
#   - control plane on the first `controlPlanes` (2) hosts; from `scaleThreshold` (50)
#     hosts on, on the `controlPlanes` hosts right after the etcd hosts instead;
#   - every host is a worker, except: from `scaleThreshold` hosts on the etcd hosts are
#     not, and from `massiveScaleThreshold` (200) on the control-plane hosts are not.
# (Kubespray also makes the etcd hosts calico route reflectors from 50 hosts on; kdeploy
# has no calico_rr role yet.)
#
#   kd.inventory { addresses = [ "10.0.0.1" "10.0.0.2" ]; }
#   kd.inventory { range = { from = "10.90.0.1"; count = 1000; }; prefix = "node"; }
#
# `nodes` (optional) adds attributes to generated nodes by name, e.g.
# nodes.node7.settings.kubelet.maxPods = 50. The result is an attrset for kd.cluster's
# `nodes` and can be merged with hand-written nodes using //.
args:
let
  lib = import ./lib;
  inherit (lib) errors ip;
  inherit (builtins) attrNames filter elem head length genList elemAt listToAttrs isList isAttrs isInt
    concatStringsSep;
  where = errors.where;
  known = [ "addresses" "range" "prefix" "controlPlanes" "scaleThreshold" "massiveScaleThreshold" "nodes" ];
  unknown = filter (k: !(elem k known)) (attrNames args);

  addresses =
    if args ? addresses && args ? range then errors.fail "kd.inventory: give either `addresses` or `range`, not both (at ${where "range" args})"
    else if args ? addresses then
      (if !(isList args.addresses) then errors.fail "kd.inventory: `addresses` must be a list of IPv4 addresses (at ${where "addresses" args})"
       else args.addresses)
    else if args ? range then
      (let r = args.range; in
       if !(isAttrs r) || !(r ? from) || !(r ? count) || !(isInt r.count) || r.count < 1 then
         errors.fail "kd.inventory: `range` must be { from = \"a.b.c.d\"; count = N; } with N >= 1 (at ${where "range" args})"
       else ip.range r.from r.count)
    else errors.fail "kd.inventory: give `addresses` (a list) or `range` ({ from; count; })";

  prefix = args.prefix or "node";
  cpCount = args.controlPlanes or 2;
  scale = args.scaleThreshold or 50;
  massive = args.massiveScaleThreshold or 200;
  extra = args.nodes or { };

  n = length addresses;
  etcdCount = if n >= 3 then 3 else 1;
  # 0-based index ranges
  isEtcd = i: i < etcdCount;
  isCP = i: if n >= scale then i >= etcdCount && i < etcdCount + cpCount else i < cpCount;
  isWorker = i: !((n >= scale && isEtcd i) || (n >= massive && isCP i));

  roles = i:
    (if isCP i then [ "control-plane" ] else [ ])
    ++ (if isEtcd i then [ "etcd" ] else [ ])
    ++ (if isWorker i then [ "worker" ] else [ ]);

  badAddr = filter (a: ip.parse a == null) addresses;
  names = genList (i: "${prefix}${toString (i + 1)}") n;
  badExtra = filter (k: !(elem k names)) (attrNames extra);

  nodes = listToAttrs (genList
    (i:
      let name = elemAt names i; in
      {
        inherit name;
        value = { address = elemAt addresses i; roles = roles i; } // (extra.${name} or { });
      })
    n);
in
if unknown != [ ] then
  errors.fail "kd.inventory: unknown attribute '${head unknown}' (at ${where (head unknown) args}).${errors.didYouMean (head unknown) known} Known: ${concatStringsSep ", " known}."
else if n == 0 then errors.fail "kd.inventory: no addresses given"
else if badAddr != [ ] then errors.fail "kd.inventory: ${builtins.toJSON (head badAddr)} is not an IPv4 address (at ${where "addresses" args})"
else if badExtra != [ ] then
  errors.fail "kd.inventory: nodes.${head badExtra} is not a generated node (at ${where (head badExtra) extra}).${errors.didYouMean (head badExtra) names}"
else nodes
