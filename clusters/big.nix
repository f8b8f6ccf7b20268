# A generated 1000-node cluster for benchmarks, with Kubespray's inventory-builder role
# rules (kd.inventory): at this size etcd runs on node1-3 only, node4-5 are dedicated
# control planes, everything else is a worker. The pod network holds 1024 /24 blocks.
let kd = import <kdeploy>; in
kd.cluster {
  name = "big";
  nodes = kd.inventory {
    range = { from = "10.90.0.1"; count = 1000; };
    prefix = "node";
  };
  settings = {
    network.podCIDR = "10.192.0.0/14";
    network.serviceCIDR = "10.233.0.0/18";
    network.nodeCIDR = "10.90.0.0/22";
    dns.nameservers = [ "10.90.3.254" ];
  };
}
