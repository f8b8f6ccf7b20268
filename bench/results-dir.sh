# shellcheck shell=bash
# Sourced by the benchmark scripts: sets RESULTS, the directory a run writes
# its table and raw numbers to. Raw results are committed with the table they
# produce, one directory per run named by date and commit (`-dirty` when the
# tree has uncommitted changes), so every table in BENCHMARKS.md names the
# run it came from. RESULTS=DIR set by the caller wins (e.g. to add the
# second half of bench/switch.sh to an earlier run); RESULTS_SUFFIX is added
# to the name otherwise (bench/limit.sh's `-runN`).
if [[ -z ${RESULTS:-} ]]; then
  RESULTS=$ROOT/bench/results/$(date -u +%Y-%m-%d)-$(git -C "$ROOT" rev-parse --short HEAD)
  git -C "$ROOT" diff --quiet HEAD -- . ':!bench/results' || RESULTS+=-dirty
  RESULTS+=${RESULTS_SUFFIX:-}
fi
mkdir -p "$RESULTS"
echo "results: ${RESULTS#"$ROOT"/}" >&2
