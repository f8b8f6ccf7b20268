#!/bin/sh
# Writes tests/clusters/lab-etcd.nix grown to N lab nodes (default 20) to stdout: node i
# is kdnode<i> at 10.77.0.<10+i> (lab/lab.sh's addresses); the first three
# are etcd members as in the lab, the first also the control plane, the rest
# workers. With CACHE (a URL), transfer.cache names it; with CHANGED=i,
# node i has a sysctl of its own (the "one node's setting changed" case).
# Same phases, same generate-only Kubernetes part, same Debian binaries as
# the lab cluster.
# Usage: gen-lab.sh [N [CACHE]]
set -eu
n=${1:-20}
cache=${2:-}
changed=${CHANGED:-0}
dir=$(cd "$(dirname "$0")/../.." && pwd)
nodes=''
i=1
while [ "$i" -le "$n" ]; do
  roles='"worker"'
  [ "$i" -le 3 ] && roles='"worker" "etcd"'
  [ "$i" -eq 1 ] && roles='"control-plane" "etcd"'
  own=''
  [ "$i" -ne "$changed" ] || own=' settings.preinstall.additionalSysctl."vm.swappiness" = 10;'
  nodes="$nodes    kdnode$i = { address = \"10.77.0.$((10 + i))\"; roles = [ $roles ];$own };
"
  i=$((i + 1))
done
extra=''
[ -z "$cache" ] || extra="transfer.cache = \"$cache\";"
# the lab cluster's settings, its three nodes replaced by these
awk -v nodes="$nodes" -v extra="$extra" '
  /^  nodes = \{/ { print; printf "%s", nodes; skip = 1; next }
  skip && /^  \};/ { skip = 0 }
  skip { next }
  /name = "lab";/ { sub(/"lab"/, "\"lab'"$n"'\"") }
  /^  settings = \{/ { print; if (extra != "") print "    " extra; next }
  { print }
' "$dir/tests/clusters/lab-etcd.nix"
