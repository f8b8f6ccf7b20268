# kd.inventory role rules at the sizes where they change, naming, address ranges
# across octet boundaries, per-node extras; and kd.addressRange.
let
  kd = import <kdeploy>;
  summary = n:
    let
      nodes = kd.inventory { range = { from = "10.90.0.250"; count = n; }; };
      with' = r: builtins.filter (k: builtins.elem r nodes.${k}.roles) (builtins.attrNames nodes);
      take = l: if builtins.length l > 6 then "${toString (builtins.length l)} nodes" else l;
    in {
      etcd = take (with' "etcd");
      controlPlane = take (with' "control-plane");
      workers = builtins.length (with' "worker");
      first = nodes.node1.address;
      last = nodes."node${toString n}".address;
    };
in
{
  n1 = summary 1; n2 = summary 2; n3 = summary 3; n49 = summary 49; n50 = summary 50;
  n199 = summary 199; n200 = summary 200;
  addresses = kd.inventory { addresses = [ "10.0.0.5" "10.0.0.9" ]; prefix = "k"; nodes.k2.settings.kubelet.maxPods = 10; };
  range = kd.addressRange "10.0.255.254" 4;
}
