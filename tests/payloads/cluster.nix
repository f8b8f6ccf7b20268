# A cluster with slot number `index` of slots.nix set: the payload in one string of one
# option, on top of one of two base clusters that between them switch on every phase
# content a setting can reach (hooks of joining etcd members, the external or localhost
# API load balancer, proxies, calico or flannel, kubeadm-run etcd, managed resolv.conf,
# metrics-server). `binDir` is where the test put its stub commands.
{ payload, index, base, binDir }:
let
  kd = import <kdeploy>;
  options = import <kdeploy/options>;
  inherit (builtins) attrNames elemAt listToAttrs map tail head;

  slot = elemAt (import ./slots.nix { inherit payload; }).slots (builtins.fromJSON index);

  # { a = { b = v; }; } from [ "a" "b" ] and v
  setAt = path: v: if path == [ ] then v else { ${head path} = setAt (tail path) v; };
  # Settings merged group by group; an option's value is replaced whole.
  merge = decl: a: b: a // listToAttrs (map
    (k: {
      name = k;
      value = if a ? ${k} && !(options.eval.isOption decl.${k}) then merge decl.${k} a.${k} b.${k} else b.${k};
    })
    (attrNames b));

  bases = {
    a = {
      nodes = {
        m1 = { address = "10.80.0.11"; roles = [ "control-plane" "etcd" ]; };
        m2 = { address = "10.80.0.12"; roles = [ "control-plane" "etcd" ]; };
        m3 = { address = "10.80.0.13"; roles = [ "control-plane" "etcd" ]; };
        w1 = { address = "10.80.0.21"; roles = [ "worker" ]; };
      };
      settings = {
        paths.binDir = binDir;
        network.plugin = "calico";
        addons.metricsServer.enable = true;
        proxy = { http = "http://proxy.example:3128"; https = "http://proxy.example:3128"; };
        dns.nameservers = [ "10.80.0.53" ];
        loadBalancer.healthcheckPort = 8081;
        preinstall.etcHostsExtra = [ "10.80.0.5 registry.example" ];
      };
    };
    b = {
      nodes = {
        m1 = { address = "10.80.0.11"; roles = [ "control-plane" ]; };
        w1 = { address = "10.80.0.21"; roles = [ "worker" ]; };
        w2 = { address = "10.80.0.22"; roles = [ "worker" ]; };
      };
      settings = {
        paths.binDir = binDir;
        network.plugin = "flannel";
        loadBalancer = { type = "haproxy"; externalAddress = "lb.example"; };
        etcd.deploymentType = "kubeadm";
        dns.mode = "coredns_dual";
        kubeProxy.mode = "nftables";
        kubelet.failSwapOn = false;
      };
    };
  };
  b = bases.${base};
in
kd.cluster {
  name = "payload";
  inherit (b) nodes;
  settings = merge options.decl b.settings (setAt slot.path slot.value);
}
