# shellcheck shell=bash
# Sourced by the evaluator benchmarks (bench/lang.sh, bench/scale.sh): checks
# the tools, builds kdeploy (unless KDEPLOY names a binary) and copies it to
# WORK so a concurrent rebuild cannot swap it mid-run (sets WORK, KD), and
# defines peak_mb. Expects ROOT and MEM_RUNS.
for tool in nix-instantiate hyperfine jq /usr/bin/time; do
  command -v "$tool" >/dev/null || { echo "missing: $tool" >&2; exit 2; }
done
if [[ -z "${KDEPLOY:-}" ]]; then
  cargo build --release --offline --quiet --bin kdeploy
  KDEPLOY=$ROOT/target/release/kdeploy
fi
WORK=$(mktemp -d /tmp/kdeploy-bench.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
cp "$KDEPLOY" "$WORK/kdeploy"
# shellcheck disable=SC2034  # used by the scripts that source this
KD=$WORK/kdeploy

# Peak RSS in MB (max over MEM_RUNS runs) of a command; output discarded.
peak_mb() {
  local max=0 kb
  for _ in $(seq "$MEM_RUNS"); do
    /usr/bin/time -f %M -o "$WORK/rss" "$@" >/dev/null 2>&1 || true
    kb=$(tail -n1 "$WORK/rss")
    (( kb > max )) && max=$kb
  done
  awk -v kb="$max" 'BEGIN { printf "%.0f", kb / 1024 }'
}
