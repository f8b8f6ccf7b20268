#!/usr/bin/env bash
# Scale benchmark, many-node half: kdeploy on N real lab nodes (default 20 and 50),
# each size twice -- pushing over SSH, and through a binary cache (Debian's nginx
# with WebDAV PUT in a namespace of its own on the lab bridge, transfer.cache) --
# with OpenSSH measured in the same run as the peer for what any SSH tool must pay.
#
# Per size and mode, on a FRESHLY booted lab (lab/lab.sh up N: every node from the
# clean image) and the lab cluster grown to N nodes (bench/scale/gen-lab.sh: three
# etcd members, the first also control plane, the rest workers):
#   first converge   wall time, deployer peak RSS (GNU time %M), bytes the host sent
#                    into the lab bridge (its tx counter: SSH, HTTP PUTs, everything)
#   no-op            RUNS re-runs connecting anew (--persist 0): median wall time, peak RSS; every node "unchanged"; then
#                    RUNS more with the default --persist 60 (connections kept by the keeper), median
#   one node changed node 7's own sysctl (node N if N < 7): wall time, peak RSS; only it changed
#   OpenSSH (SSH mode only)
#     connect floor  `ssh NODE true` on every node at once (median of 3)
#     copy           each node gets as many bytes as kdeploy pushed to it, with
#                    `ssh NODE 'cat > FILE'`, all nodes at once -- against kdeploy's
#                    transfer (the recap's transfer time: from the first push until
#                    the last node holds its blobs, sha256 checked); beside it the
#                    staging that follows (each file copied into the generation,
#                    which the OpenSSH copy does not do: slowest node)
# Each run is checked (exit status, recap statuses); the script fails otherwise.
# Writes bench/results/<date>-<commit>/scale-lab.md (+ logs); BENCHMARKS.md quotes it.
#
# Usage: bench/scale-lab.sh [N...]      (default: 20 50; at most 50, the lab's limit)
# Env:   RUNS=5 KDEPLOY=path (skip the build) MODES="ssh cache" (either alone: one mode)
# Needs: root, the lab's packages (lab/lab.sh deps), nginx (nginx-light), jq, GNU time.
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$PWD
RUNS=${RUNS:-5}
source "$ROOT/bench/results-dir.sh"
for tool in jq nginx /usr/bin/time; do
  command -v "$tool" >/dev/null || { echo "missing: $tool" >&2; exit 2; }
done
if [[ -z "${KDEPLOY:-}" ]]; then
  cargo build --release --offline --quiet --bin kdeploy
  KDEPLOY=$ROOT/target/release/kdeploy
fi
WORK=$(mktemp -d /tmp/kdeploy-scale-lab.XXXXXX)
NGINX_PID=''
cleanup() {
  [[ -z $NGINX_PID ]] || kill "$NGINX_PID" 2>/dev/null || true
  lab/lab.sh down >/dev/null 2>&1 || true
  rm -rf "$WORK"
}
trap cleanup EXIT
cp "$KDEPLOY" "$WORK/kdeploy"
KD=$WORK/kdeploy
LAB=$ROOT/.lab
CACHE_ADDR=10.77.0.250:8080
sizes=("$@"); (( ${#sizes[@]} )) || sizes=(20 50)

die() { echo "!! $*" >&2; exit 1; }
tx() { cat /sys/class/net/kdbr0/statistics/tx_bytes; }
mb() { awk -v b="$1" 'BEGIN { printf "%.0f", b / 1e6 }'; }
median() { sort -n | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

# kd LOG SUBCOMMAND ARGS...: run kdeploy with the lab's key, verbose events to LOG.err,
# the JSON recap to LOG.json, GNU time's "wall peakKB" to LOG.time.
kd() {
  local log=$1; shift
  /usr/bin/time -f '%e %M' -o "$log.time" "$KD" "$@" --ssh-key "$LAB/id_ed25519" \
    --known-hosts "$LAB/known_hosts" --output json -v >"$log.json" 2>"$log.err"
}
wall() { cut -d' ' -f1 "$1.time"; }
peak() { awk '{ printf "%.0f", $2 / 1024 }' "$1.time"; }
statuses() { jq -r '[.nodes[].status] | group_by(.) | map("\(length) \(.[0])") | join(", ")' "$1.json"; }
changed_nodes() { jq -r '[.nodes | to_entries[] | select(.value.status != "unchanged") | .key] | join(",")' "$1.json"; }

start_cache() {
  local d=$WORK/nginx
  rm -rf "$d" # an empty cache for each size: its first converge uploads every blob
  mkdir -p "$d/www/cache" "$d/tmp"
  cat >"$d/nginx.conf" <<EOF
daemon off; master_process off; user root; worker_processes 1;
pid $d/nginx.pid; error_log $d/error.log;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path $d/tmp; proxy_temp_path $d/tmp; fastcgi_temp_path $d/tmp;
  uwsgi_temp_path $d/tmp; scgi_temp_path $d/tmp;
  sendfile on;
  server {
    listen $CACHE_ADDR;
    root $d/www;
    location /cache/ { dav_methods PUT; create_full_put_path on; client_max_body_size 0; }
  }
}
EOF
  lab/lab.sh cache up >/dev/null
  ip netns exec kdcache nginx -c "$d/nginx.conf" -p "$d" &
  NGINX_PID=$!
  for _ in $(seq 100); do
    (exec 3<>"/dev/tcp/${CACHE_ADDR%:*}/${CACHE_ADDR#*:}") 2>/dev/null && return 0
    sleep 0.1
  done
  die "nginx did not start"
}

stop_cache() {
  kill "$NGINX_PID" 2>/dev/null || true
  wait "$NGINX_PID" 2>/dev/null || true
  NGINX_PID=''
  lab/lab.sh cache down
}

# openssh_true N: seconds for `ssh NODE true` on all N nodes at once (median of 3)
openssh_true() {
  for _ in 1 2 3; do
    local s e
    s=$(date +%s.%N)
    for i in $(seq "$1"); do ssh -F "$LAB/ssh_config" "kdnode$i" true & done
    wait
    e=$(date +%s.%N)
    awk -v s="$s" -v e="$e" 'BEGIN { printf "%.2f\n", e - s }'
  done | median
}

# openssh_copy LOG REMOTE: every node gets, with `ssh NODE 'cat > FILE'`, as many bytes as
# kdeploy's first converge pushed to it (its "pushed N blob(s), X MB" line), all at once;
# prints "seconds bytes".
openssh_copy() {
  local log=$1 remote=$2 src=$WORK/bytes s e total=0
  cat /usr/bin/etcd /usr/bin/etcdctl /usr/bin/containerd /usr/bin/containerd-shim-runc-v2 \
    /usr/bin/ctr /usr/sbin/runc /usr/bin/etcd /usr/bin/containerd >"$src"
  declare -A want=()
  while read -r node bytes; do want[$node]=$bytes; total=$((total + bytes)); done < <(
    sed -n 's/^\[\(kdnode[0-9]*\)\] pushed [0-9]* blob(s), \([0-9.]*\) MB.* in .*/\1 \2/p' "$log.err" |
      awk '{ printf "%s %.0f\n", $1, $2 * 1e6 }')
  s=$(date +%s.%N)
  for node in "${!want[@]}"; do
    head -c "${want[$node]}" "$src" | ssh -F "$LAB/ssh_config" "$node" "$remote" &
  done
  wait
  e=$(date +%s.%N)
  for node in "${!want[@]}"; do ssh -F "$LAB/ssh_config" "$node" 'rm -f /var/tmp/openssh-copy' & done
  wait
  awk -v s="$s" -v e="$e" -v t="$total" 'BEGIN { printf "%.2f %.0f\n", e - s, t }'
}

# kdeploy's transfer (all nodes), and the slowest node's staging after it, seconds.
kd_transfer() { jq -r '.transfer.tookSecs // "?" | if type == "number" then (. * 100 | round / 100) else . end' "$1.json"; }
kd_stage() { sed -n 's/^\[kdnode[0-9]*\] staged .* in \([0-9.]*\) s$/\1/p' "$1.err" | sort -n | tail -n1; }

rows=()
ssh_rows=()
for n in "${sizes[@]}"; do
  for mode in ${MODES:-ssh cache}; do
    echo ">> $n nodes, $mode" >&2
    lab/lab.sh down >/dev/null 2>&1
    if ! lab/lab.sh up "$n" >"$WORK/lab-up.log" 2>&1; then
      # a size the machine cannot boot is recorded as such; the others still count
      echo "!! lab up $n failed: $(tail -n 3 "$WORK/lab-up.log" | head -n 1)" >&2
      rows+=("| $n | $mode | the lab did not boot $n nodes on this machine | | | | | | |")
      continue
    fi
    p=$WORK/p-$n-$mode
    mkdir -p "$p"
    export KDEPLOY_SECRETS=$p/secrets
    url=''
    if [[ $mode == cache ]]; then start_cache; url="http://$CACHE_ADDR/cache"; fi
    bench/scale/gen-lab.sh "$n" "$url" >"$p/cluster.nix"
    target=$(( n < 7 ? n : 7 ))
    CHANGED=$target bench/scale/gen-lab.sh "$n" "$url" >"$p/changed.nix"
    log=$RESULTS/scale-lab-logs/$n-$mode
    mkdir -p "$(dirname "$log")"

    t0=$(tx)
    kd "$log-first" switch "$p/cluster.nix" || die "first converge: $(tail -n 20 "$log-first.err")"
    sent=$(( $(tx) - t0 ))
    [[ $(statuses "$log-first") == "$n changed" ]] || die "first converge: $(statuses "$log-first")"

    walls=() peaks=()
    for r in $(seq "$RUNS"); do
      kd "$log-noop" switch "$p/cluster.nix" --persist 0 || die "no-op $r"
      [[ $(statuses "$log-noop") == "$n unchanged" ]] || die "no-op: $(statuses "$log-noop")"
      walls+=("$(wall "$log-noop")"); peaks+=("$(peak "$log-noop")")
    done
    noop=$(printf '%s\n' "${walls[@]}" | median)
    noop_peak=$(printf '%s\n' "${peaks[@]}" | sort -n | tail -n1)
    # the same with the connections kept between runs (--persist: the first
    # run starts the keeper and makes them, the RUNS after it use them)
    kd "$log-kept" switch "$p/cluster.nix" --persist 60 || die "no-op, keeper started"
    walls=()
    for r in $(seq "$RUNS"); do
      kd "$log-kept" switch "$p/cluster.nix" --persist 60 || die "no-op kept $r"
      [[ $(statuses "$log-kept") == "$n unchanged" ]] || die "no-op kept: $(statuses "$log-kept")"
      walls+=("$(wall "$log-kept")")
    done
    pkill -f "^$KD keeper " || true
    kept=$(printf '%s\n' "${walls[@]}" | median)

    kd "$log-change" switch "$p/changed.nix" || die "one node changed"
    touched=$(changed_nodes "$log-change")
    [[ $touched == "kdnode$target" ]] || die "one node changed, but touched: $touched"

    rows+=("| $n | $mode | $(wall "$log-first") s | $(peak "$log-first") MB | $(mb "$sent") MB | $noop s, kept $kept s (${#walls[@]} runs each) | $noop_peak MB | $(wall "$log-change") s ($touched) | $(peak "$log-change") MB |")
    if [[ $mode == ssh ]]; then
      read -r copy_s copy_bytes < <(openssh_copy "$log-first" 'cat > /var/tmp/openssh-copy')
      read -r check_s _ < <(openssh_copy "$log-first" 'cat > /var/tmp/openssh-copy && sha256sum /var/tmp/openssh-copy >/dev/null')
      ssh_rows+=("| $n | $(openssh_true "$n") s | $noop s, kept $kept s | $(mb "$copy_bytes") MB | $copy_s s | $check_s s | $(kd_transfer "$log-first") s | $(kd_stage "$log-first") s |")
    else
      stop_cache
    fi
  done
done
lab/lab.sh down >/dev/null 2>&1

{
  echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC'); machine: $(nproc) CPUs, $(awk '/MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo); the nodes share these CPUs"
  echo "- kdeploy: commit $(git rev-parse --short HEAD), $(basename "$(dirname "$KDEPLOY")") profile; OpenSSH $(ssh -V 2>&1 | cut -d, -f1); nginx $(nginx -v 2>&1 | sed 's/.*nginx\///')"
  echo "- each size and mode on a freshly booted lab; no-op: median of $RUNS; bytes sent: the host's tx counter on the lab bridge"
  echo
  echo "| nodes | blobs via | first converge | peak | bytes sent by the deployer | no-op | peak | one node's setting changed | peak |"
  echo "|---:|---|---:|---:|---:|---:|---:|---:|---:|"
  printf '%s\n' "${rows[@]}"
  echo
  echo "| nodes | OpenSSH: \`ssh NODE true\` on all | kdeploy no-op | blob bytes | OpenSSH: \`ssh NODE 'cat > f'\` on all | the same, then \`sha256sum f\` | kdeploy transfer, compressed, sha256 checked | then staging (slowest node) |"
  echo "|---:|---:|---:|---:|---:|---:|---:|---:|"
  printf '%s\n' "${ssh_rows[@]}"
} | tee "$RESULTS/scale-lab.md"
