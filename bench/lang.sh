#!/usr/bin/env bash
# Language-evaluator benchmark: kdeploy vs `nix-instantiate --eval --strict`.
#
# Builds kdeploy in release mode, then for every workload in bench/lang/*.nix
#   1. evaluates it with both tools (`--json`) and fails the run if the
#      outputs differ (or differ from the file's `# expect:` line),
#   2. times both with hyperfine (--warmup 1, --runs $RUNS),
#   3. measures peak RSS of each with GNU time (`%M`, max over $MEM_RUNS runs),
# and prints a markdown table with the machine description on top. The table
# is also written to bench/results/<date>-<commit>/lang.md, raw hyperfine JSON next to it.
#
# Workload headers (comment lines in the .nix file):
#   # expect: VALUE   kdeploy's --json output must equal VALUE
#   # nix: crash      Nix is expected to fail (e.g. stack overflow); only
#                     kdeploy is timed and the row says "nix: crash"
#
# Usage: bench/lang.sh [WORKLOAD...]     (names without .nix; default: all)
# Env:   RUNS=5 MEM_RUNS=3 KDEPLOY=path (skip the build, use this binary)
# Needs: cargo, nix-instantiate, hyperfine, jq, GNU time (/usr/bin/time).
# No network: cargo runs with --offline. Nix runs with an empty environment
# (env -i PATH HOME=/tmp/nixhome) so no user config or NIX_PATH leaks in.
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$PWD
RUNS=${RUNS:-5}
MEM_RUNS=${MEM_RUNS:-3}
source "$ROOT/bench/results-dir.sh"
mkdir -p "$RESULTS" /tmp/nixhome

source "$ROOT/bench/eval-common.sh"
NIXENV=(env -i "PATH=$PATH" HOME=/tmp/nixhome)
nix_eval() { "${NIXENV[@]}" nix-instantiate --eval --strict --json "$@"; }
kd_eval() { "$KD" eval --json "$@"; }

# Wall time "median (min–max)" of result $2 in a hyperfine JSON export $1.
fmt_time() {
  jq -r --argjson i "$2" '.results[$i] | [.median, .min, .max] | @tsv' "$1" |
    awk '{ if ($1 < 1) printf "%.0f ms (%.0f–%.0f)", $1*1000, $2*1000, $3*1000;
           else printf "%.2f s (%.2f–%.2f)", $1, $2, $3 }'
}
median_of() { jq -r --argjson i "$2" '.results[$i].median' "$1"; }
cpu_of() { jq -r --argjson i "$2" '.results[$i] | .user + .system' "$1"; }
# CPU time (user+sys, mean) "1.23 s".
fmt_cpu() { awk -v t="$(cpu_of "$1" "$2")" 'BEGIN { if (t < 1) printf "%.0f ms", t*1000; else printf "%.2f s", t }'; }

commit=$(git rev-parse --short HEAD)
git diff --quiet HEAD -- lang src Cargo.toml Cargo.lock 2>/dev/null || commit="$commit+dirty"
cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')
mem=$(awk '/MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo)

header() {
  echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo "- machine: $(nproc) CPUs ($cpu), $mem RAM, Linux $(uname -r), stack limit $(ulimit -s) KiB"
  echo "- nix: $(nix-instantiate --version | sed 's/.*(Nix) //'), kdeploy: commit $commit ($(rustc --version | cut -d' ' -f1-2), release profile)"
  echo "- hyperfine $(hyperfine --version | cut -d' ' -f2): --warmup 1 --runs $RUNS; peak RSS: GNU time %M, max of $MEM_RUNS runs"
  echo "- load average at start: $LOAD_START; at end: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo
  echo "Times are wall-clock medians (min–max) over $RUNS runs; ratio = nix / kdeploy"
  echo "(above 1 means kdeploy is faster). CPU = mean user+sys time, less sensitive"
  echo "to other load on the machine than wall time."
  echo
  echo "| workload | kdeploy time | nix time | ratio (nix/kdeploy) | kdeploy CPU | nix CPU | CPU ratio | kdeploy peak MB | nix peak MB |"
  echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
}

if (( $# )); then
  files=(); for w in "$@"; do files+=("bench/lang/${w%.nix}.nix"); done
else
  files=(bench/lang/*.nix)
fi

LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)
status=0
rows=()
for f in "${files[@]}"; do
  name=$(basename "$f" .nix)
  expect=$(sed -n 's/^# expect: //p' "$f" | head -n1)
  nix_crash=0; grep -q '^# nix: crash' "$f" && nix_crash=1
  echo ">> $name" >&2

  if ! kd_out=$(kd_eval "$f" 2>"$WORK/kd.err"); then
    echo "!! $name: kdeploy failed:" >&2; head -n 20 "$WORK/kd.err" >&2
    rows+=("| $name | **error** | | | | |"); status=1; continue
  fi
  kd_out=$(printf '%s' "$kd_out" | tr -d '\n')
  if [[ -n "$expect" && "$kd_out" != "$expect" ]]; then
    echo "!! $name: kdeploy printed $kd_out, expected $expect" >&2
    status=1
  fi

  if (( nix_crash )) && ! nix_eval "$f" >/dev/null 2>"$WORK/nix.err"; then
    echo "   nix fails as expected: $(grep -m1 error "$WORK/nix.err")" >&2
    hyperfine -N --style none --warmup 1 --runs "$RUNS" --export-json "$RESULTS/$name.json" \
      -n kdeploy "$KD eval --json $f" >/dev/null 2>&1
    rows+=("| $name | $(fmt_time "$RESULTS/$name.json" 0) | nix: crash | — | $(fmt_cpu "$RESULTS/$name.json" 0) | nix: crash | — | $(peak_mb "$KD" eval --json "$f") | — |")
    continue
  fi

  nix_out=$(nix_eval "$f" 2>"$WORK/nix.err" | tr -d '\n') || {
    echo "!! $name: nix failed:" >&2; head -n 20 "$WORK/nix.err" >&2; status=1
  }
  mark=""
  if [[ "$kd_out" != "$nix_out" ]]; then
    echo "!! $name: outputs differ" >&2
    echo "   kdeploy: ${kd_out:0:300}" >&2
    echo "   nix:     ${nix_out:0:300}" >&2
    mark=" **(output differs)**"; status=1
  fi

  hyperfine -N --style none --warmup 1 --runs "$RUNS" --export-json "$RESULTS/$name.json" \
    -n kdeploy "$KD eval --json $f" \
    -n nix "env -i PATH=$PATH HOME=/tmp/nixhome nix-instantiate --eval --strict --json $f" >/dev/null 2>&1
  j=$RESULTS/$name.json
  ratio=$(awk -v k="$(median_of "$j" 0)" -v n="$(median_of "$j" 1)" 'BEGIN { printf "%.2f×", n / k }')
  cpu_ratio=$(awk -v k="$(cpu_of "$j" 0)" -v n="$(cpu_of "$j" 1)" 'BEGIN { printf "%.2f×", n / k }')
  rows+=("| $name$mark | $(fmt_time "$j" 0) | $(fmt_time "$j" 1) | $ratio | $(fmt_cpu "$j" 0) | $(fmt_cpu "$j" 1) | $cpu_ratio | $(peak_mb "$KD" eval --json "$f") | $(peak_mb "${NIXENV[@]}" nix-instantiate --eval --strict --json "$f") |")
done

{ header; printf '%s\n' "${rows[@]}"; } | tee "$RESULTS/lang.md"
if (( status )); then
  echo "FAILED: kdeploy and Nix disagree (or a workload failed); see above" >&2
fi
exit "$status"
