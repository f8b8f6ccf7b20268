#!/usr/bin/env bash
# Scale benchmark, evaluation half: kdeploy's whole `kdeploy eval` of a large
# cluster (evaluation, typed closures, hashes, the listing) against
# `nix-instantiate --eval --strict --json` of the same cluster value, in one run.
#
# Clusters: clusters/big.nix (1000 nodes from kd.inventory) and, from
# bench/scale/gen-cluster.sh, clusters of N nodes written node by node (three
# control planes, role settings, per-node settings on every tenth worker).
# For each cluster it first checks that `kdeploy eval --json` prints exactly
# what Nix prints (the run fails otherwise), then times both with hyperfine
# and takes peak RSS with GNU time. Writes bench/results/<date>-<commit>/scale-eval.md
# (and the hyperfine JSON); BENCHMARKS.md quotes the table.
#
# Then the many-node half, bench/scale-lab.sh (real lab nodes, pushing over
# SSH and through the HTTP binary cache, OpenSSH measured alongside), into the
# same results directory; LAB_SIZES="" skips it (it needs root and the lab).
#
# Usage: bench/scale.sh [N...]     (default: 1500 2000; past ~2800 nodes the --json text of
#        the check passes kdeploy's 256 MiB string limit, /etc/hosts being N² bytes)
# Env:   RUNS=10 MEM_RUNS=3 KDEPLOY=path (skip the build, use this binary)
#        LAB_SIZES="20 50" (node counts for the many-node half; "" skips it)
# Needs: cargo, nix-instantiate, hyperfine, jq, GNU time (/usr/bin/time).
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$PWD
RUNS=${RUNS:-10}
MEM_RUNS=${MEM_RUNS:-3}
source "$ROOT/bench/results-dir.sh"
mkdir -p /tmp/nixhome
source "$ROOT/bench/eval-common.sh"
NIX=(env -i "PATH=$PATH" HOME=/tmp/nixhome nix-instantiate --readonly-mode --eval --strict --json -I "kdeploy=$ROOT/stdlib")
stat_of() { jq -r --argjson i "$2" ".results[\$i].$3" "$1"; }
ms() { awk -v t="$1" 'BEGIN { printf "%.0f", t * 1000 }'; }

sizes=("$@"); (( ${#sizes[@]} )) || sizes=(1500 2000)
clusters=("$ROOT/clusters/big.nix")
for n in "${sizes[@]}"; do
  bench/scale/gen-cluster.sh "$n" > "$WORK/scale$n.nix"
  clusters+=("$WORK/scale$n.nix")
done

LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)
rows=()
for f in "${clusters[@]}"; do
  name=$(basename "$f" .nix)
  "$KD" eval --json "$f" > "$WORK/kd.json"
  nodes=$(jq '.nodes | length' "$WORK/kd.json")
  echo ">> $name ($nodes nodes)" >&2
  "${NIX[@]}" "$f" > "$WORK/nix.json"
  if ! cmp -s <(tr -d '\n' < "$WORK/kd.json") <(tr -d '\n' < "$WORK/nix.json"); then
    echo "!! $name: kdeploy's and Nix's values differ" >&2; exit 1
  fi
  "$KD" eval "$f" > /dev/null # the closures build (a wrong closure fails here)
  j=$RESULTS/scale-eval-$name.json
  hyperfine -N --style none --warmup 1 --runs "$RUNS" --export-json "$j" \
    -n "kdeploy eval" "$KD eval $f" \
    -n "nix-instantiate" "${NIX[*]} $f" >/dev/null 2>&1
  kd=$(stat_of "$j" 0 median); nx=$(stat_of "$j" 1 median)
  kcpu=$(awk -v u="$(stat_of "$j" 0 user)" -v s="$(stat_of "$j" 0 system)" 'BEGIN { print u + s }')
  ncpu=$(awk -v u="$(stat_of "$j" 1 user)" -v s="$(stat_of "$j" 1 system)" 'BEGIN { print u + s }')
  rows+=("| $name | $nodes | $(ms "$kd") ms ($(ms "$(stat_of "$j" 0 min)")–$(ms "$(stat_of "$j" 0 max)")) | $(ms "$nx") ms ($(ms "$(stat_of "$j" 1 min)")–$(ms "$(stat_of "$j" 1 max)")) | $(awk -v a="$nx" -v b="$kd" 'BEGIN { printf "%.2f×", a / b }') | $(ms "$kcpu") ms | $(ms "$ncpu") ms | $(peak_mb "$KD" eval "$f") | $(peak_mb "${NIX[@]}" "$f") |")
done

{
  echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC'); machine: $(nproc) CPUs, $(awk '/MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo)"
  echo "- kdeploy: commit $(git rev-parse --short HEAD), release profile; nix $(nix-instantiate --version | sed 's/.*(Nix) //')"
  echo "- hyperfine --warmup 1 --runs $RUNS (wall median, min–max); peak RSS: GNU time %M, max of $MEM_RUNS runs"
  echo "- load average at start: $LOAD_START; at end: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo
  echo "| cluster | nodes | kdeploy eval (closures, hashes, listing) | nix-instantiate --eval --strict --json | ratio (nix/kdeploy) | kdeploy CPU | nix CPU | kdeploy peak MB | nix peak MB |"
  echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
  printf '%s\n' "${rows[@]}"
} | tee "$RESULTS/scale-eval.md"

if [[ -n ${LAB_SIZES-20 50} ]]; then
  # shellcheck disable=SC2086 # the sizes are words
  RESULTS=$RESULTS KDEPLOY=$KD bench/scale-lab.sh ${LAB_SIZES-20 50}
fi
