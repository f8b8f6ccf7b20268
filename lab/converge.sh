#!/usr/bin/env bash
# README command 1: on a fresh Debian machine (root), build kdeploy, boot the
# local lab of 3 real nodes, converge clusters/lab.nix onto them, and show
# the etcd cluster healthy. Re-running it is the no-op re-run.
set -euo pipefail
cd "$(dirname "$0")/.."

need=(nix-bin systemd-container debootstrap openssh-client iproute2 etcd-server etcd-client containerd runc)
missing=()
for p in "${need[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if ((${#missing[@]})); then
  echo "== installing ${missing[*]}"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi

echo "== building kdeploy"
cargo build --release --quiet

echo "== booting the lab (3 nodes at 10.77.0.11-13)"
lab/lab.sh up 3

echo "== kdeploy switch clusters/lab.nix"
./target/release/kdeploy switch clusters/lab.nix --ssh-key .lab/id_ed25519 --known-hosts .lab/known_hosts

echo "== etcd (mutual TLS, kdeploy's PKI), seen from k8s-master"
lab/lab.sh ssh 1 'set -a; . /etc/etcd.env; etcdctl endpoint health --cluster; etcdctl member list -w table'
