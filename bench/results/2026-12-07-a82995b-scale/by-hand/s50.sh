#!/bin/bash
# 50-node first converge twice: a fresh deployer store, then warm (reset between)
cd /work/bench-tree || exit 1
KD=${KD:-/work/notes/kd-a82995b}
A=(--ssh-key .lab/id_ed25519 --known-hosts .lab/known_hosts)
lab/lab.sh down >/dev/null 2>&1
lab/lab.sh up 50 >/dev/null 2>&1 || { echo "lab up failed"; exit 1; }
rm -rf /tmp/s50; mkdir -p /tmp/s50; export KDEPLOY_SECRETS=/tmp/s50/secrets
bench/scale/gen-lab.sh 50 "" > /tmp/s50/cluster.nix
for r in fresh warm warm2; do
  s=$(date +%s.%N)
  $KD switch /tmp/s50/cluster.nix "${A[@]}" > /dev/null 2>/tmp/s50/$r.err
  e=$(date +%s.%N)
  echo "$r: converge $(echo "$e - $s" | bc) s; $(grep 'transfer:' /tmp/s50/$r.err)"
  $KD reset /tmp/s50/cluster.nix --yes "${A[@]}" >/dev/null 2>&1
done
lab/lab.sh down >/dev/null 2>&1
