#!/bin/sh
# Writes a cluster of N nodes (default 1500), node by node, to stdout: three
# control-plane + etcd nodes, the rest workers, role settings, and per-node
# settings on every tenth worker (as a real inventory has a few odd hosts).
# No secrets of the user's own. Evaluates under kdeploy and under
# nix-instantiate -I kdeploy=stdlib alike.
set -eu
n=${1:-1500}
cat <<HEAD
let kd = import <kdeploy>; in
kd.cluster {
  name = "scale$n";
  settings = {
    kubernetes.version = "1.33.5";
    network.nodeCIDR = "10.64.0.0/12";
    network.podCIDR = "10.192.0.0/12";
    network.serviceCIDR = "10.233.0.0/18";
    loadBalancer.localhost = true;
    dns.nameservers = [ "10.64.0.1" ];
  };
  roleSettings = {
    worker.kubelet.maxPods = kd.mkDefault 150;
    control-plane.kubelet.kubeReserved = { cpu = "200m"; memory = "512Mi"; };
  };
  nodes = {
HEAD
i=1
while [ "$i" -le "$n" ]; do
  a=$(( (i / 250) )); b=$(( i % 250 + 1 ))
  addr="10.64.$a.$b"
  if [ "$i" -le 3 ]; then
    echo "    cp$i = { address = \"$addr\"; roles = [ \"control-plane\" \"etcd\" ]; };"
  elif [ $(( i % 10 )) -eq 0 ]; then
    echo "    node$i = { address = \"$addr\"; roles = [ \"worker\" ]; settings.kubelet.maxPods = $(( 100 + i % 50 )); };"
  else
    echo "    node$i = { address = \"$addr\"; roles = [ \"worker\" ]; };"
  fi
  i=$((i + 1))
done
echo "  };"
echo "}"
