#!/usr/bin/env bash
# Runs every test of the project: unit tests, the language corpus, the
# differential tests against real Nix (corpus and example clusters), error
# snapshots, the lab tests against real nodes (etcd, containerd, Kubernetes),
# then the stdlib's own checks (validation rules, golden closures, a real
# 3-member etcd started from generated files).
set -euo pipefail
cd "$(dirname "$0")/.."
# Whoever runs this, a lab test that cannot reach the lab fails instead of
# returning early as "ok" (tests/support/node: lab_up()).
export CI=1
logs=${KDEPLOY_LAB_DIR:-.lab}/run-all
mkdir -p "$logs"
holds=${KDEPLOY_LAB_DIR:-.lab}/holds.log
# a part's heading, with the time it starts (where a run's minutes went)
section() { echo "== $* ($(date +%T))"; }
: >"$holds"

# What the tests need besides kdeploy, prepared while the test binaries build
# (on 2 cores the Go and Rust builds overlap well: both cold, about 24 minutes
# together against 35 one after the other; warm, seconds):
# - a Kubernetes-capable lab of 21 nspawn nodes at 10.77.0.11-31, in lanes
#   (tests/support/node/lane.rs): the etcd lab three times, on kdnode1-3
#   (with the spare kdnode9-10 some tests grow onto), 11-13 and 14-16; the
#   Kubernetes lab twice, on kdnode4-8 and 17-21. A test takes whichever
#   lane of its kind is free. Booted unless it is up already, removed
#   afterwards if we booted it;
# - Kubernetes 1.34.4 (and 1.35.4, the upgrade test's target), etcd, CoreDNS,
#   flannel, the CNI plugins, built from their Go modules once (cached by
#   version), their images pushed to the lab's registry.
lab_env=${KDEPLOY_LAB_DIR:-.lab}/lab.env
if ! { lab/lab.sh status >/dev/null 2>&1 && grep -qx 'K8S=1' "$lab_env" && grep -qx 'N=21' "$lab_env"; }; then
  section "booting the lab (log: $logs/lab.log)"
  lab/lab.sh up 21 --k8s >"$logs/lab.log" 2>&1 &
  lab_pid=$!
  trap 'lab/lab.sh down' EXIT
fi
section "building Kubernetes and the rest for the lab, cached by version (log: $logs/build-k8s.log)"
{ lab/build-k8s.sh && KDEPLOY_K8S_VERSION=1.35.4 lab/build-k8s.sh kubernetes; } >"$logs/build-k8s.log" 2>&1 &
go_pid=$!

# The `ci` profile (Cargo.toml): release optimisation without LTO or debug
# info, so the test binaries link in minutes. The lab's test binary first:
# the lab tests are the longest part, and start as soon as it is built; the
# other test binaries are built while they run.
section "building the lab tests"
cargo test --profile ci --test lab --no-run
# The lab tests run from their binary, not through `cargo test`: Cargo holds
# the build directory while it builds, so a background `cargo test` started
# beside the niced build below waited for all of it (seen: the Kubernetes
# tests starting 8.6 minutes late). Run from the repository's root, as Cargo
# runs them.
lab_tests=$(cargo test --profile ci --test lab --no-run --message-format=json 2>/dev/null |
  python3 -c 'import json, sys
print(next(j["executable"] for j in map(json.loads, sys.stdin)
           if j.get("executable") and j["target"]["name"] == "lab" and j["profile"]["test"]))')
[[ -x $lab_tests ]] || { echo "run-all: no lab test binary ($lab_tests)" >&2; exit 1; }

# waited for in turn; a failure shows its log
await() {
  local pid=$1 what=$2 log=$3
  if ! wait "$pid"; then
    tail -n 40 "$log" >&2
    echo "run-all: $what failed (whole log: $log)" >&2
    exit 1
  fi
}
# The lab tests run in the background while the rest runs here: the lab's
# nodes spend much of a test waiting (a takeover waits out a silent lock's
# 30 s, an etcd member catches up), so the machine has the cores to spare.
# Each background part's output is shown when it ends.
# - the etcd lab tests on kdnode1-3, 9-16, as soon as the lab is up (they
#   need no Kubernetes), with five threads: a test waiting for nodes holds a
#   thread meanwhile, and with libtest's two the tests that could run stalled
#   behind it. Which test held which nodes for how long: .lab/holds.log
#   (tests/support/node: LabGuard). The two tests that count the bytes
#   crossing the whole lab bridge need the lab to themselves: they run last.
# - the Kubernetes lab tests, the longest (about 12 minutes), each in a lane
#   of its own, once Kubernetes is built and its images are pushed.
# A lab test first takes the nodes it changes (tests/support/node:
# lab_lock_nodes), so two tests never change one node at once.
# - the etcd lab tests pinned to lane A (they use the repository's lab file
#   as written, address nodes their own way, or grow onto kdnode9-10) run in
#   a process of their own that keeps lane A for them while it lives
#   (KDEPLOY_TEST_KEEP_LANE_A; tests/support/node: lane_a_kept), started
#   first; the others take lanes C and B meanwhile, and A once it is free.
#   Libtest starts tests in name order, so in one process the pinned tests
#   came last and lane A ran minutes past the others. A pinned test left off
#   this list still passes: it waits for lane A in the other process.
whole_lab=(cache::the_lab_converges_through_a_binary_cache compress::binaries_travel_compressed_to_nodes_with_zstd)
lane_a=(membership:: reset::a_dropped_member switch:: secrets:: mirror:: login:: node:: transport:: diff:: exec::)
# A background part writes its exit status beside its log when it ends
# ($logs/NAME.rc), which the whole-lab tests wait for: they start once the
# lanes are free and the niced rest has ended.
in_background() {
  local name=$1 st
  shift
  rm -f "$logs/$name.rc"
  # (set -e would end the subshell on a failure before it wrote the status)
  { "$@" >"$logs/$name.log" 2>&1 && st=0 || st=$?; echo "$st" >"$logs/$name.rc"; } &
}
[[ -z ${lab_pid:-} ]] || await "$lab_pid" "booting the lab" "$logs/lab.log"
section "the etcd lab tests, in three lanes, in the background (log: $logs/etcd-lab.log, $logs/etcd-lab-a.log)"
in_background etcd-lab-a env KDEPLOY_TEST_KEEP_LANE_A=1 \
  "$lab_tests" "${lane_a[@]}" --test-threads 2
etcd_a_pid=$!
# the others start once the keep is held (its first test takes it), else one
# of them may take lane A first (seen: a 148 s test there before any pinned one)
kept=${KDEPLOY_LAB_DIR:-.lab}/lane-a.kept
for _ in $(seq 150); do
  [[ -e $kept ]] && ! flock -n -x "$kept" true && break
  sleep 0.2
done
in_background etcd-lab "$lab_tests" --skip kubernetes:: \
  "${whole_lab[@]/#/--skip=}" "${lane_a[@]/#/--skip=}" --test-threads 5
etcd_pid=$!
await "$go_pid" "building the lab's Kubernetes" "$logs/build-k8s.log"
lab/images.sh push 10.77.0.1:5000
KDEPLOY_K8S_VERSION=1.35.4 lab/images.sh push 10.77.0.1:5000
section "the Kubernetes lab tests, in the background (log: $logs/kubernetes.log)"
# (--nocapture: their timings and counts of failed calls are shown even when they pass)
in_background kubernetes "$lab_tests" kubernetes:: --nocapture --test-threads 2
k8s_pid=$!
# (every test binary runs even after one failed: the run reports them all)
failed=0
# Every test target but the lab's, named, so the lab's can run with its own
# threads; a test target not named here would go unrun, so none may exist.
targets=" cli local nix_differential conformance decode fuzz lab "
for t in tests/*.rs tests/*/main.rs lang/tests/*.rs; do
  name=${t%/main.rs}
  name=${name%.rs}
  name=${name##*/}
  [[ $targets == *" $name "* ]] || { echo "run-all: the test target $name ($t) is not run here: add it" >&2; failed=1; }
done
# What runs here runs niced: it only fills the cores the lab tests (whose
# deployers, nodes and timeouts wait on each other) leave idle.
section "building the other tests"
nice -n 10 cargo test --workspace --profile ci --no-run
section "unit, cli, local, language and Nix tests"
nice -n 10 cargo test --workspace --profile ci --no-fail-fast --lib --bins \
  --test cli --test local --test nix_differential --test conformance --test decode --test fuzz || failed=1

# The parser and evaluator fuzz (proptest over generated text and programs)
# once more with many cases: 5000 of each, about ten seconds.
section "fuzz, 5000 cases; the corpus against Nix; the stdlib's checks"
# (a case that aborts the process is named by the file it was written to)
# (absolute: cargo runs a test binary in its package's directory)
fuzz_last=$(cd "$logs" && pwd)/fuzz-last-program.nix
KDEPLOY_FUZZ_CASES=5000 KDEPLOY_FUZZ_LAST="$fuzz_last" nice -n 10 \
  cargo test --workspace --profile ci --test fuzz || {
  failed=1
  echo "run-all: the last program the evaluator fuzz began ($fuzz_last):" >&2
  cat "$fuzz_last" >&2 || true
}
# Real Nix must still agree with the corpus's expectations (CI installs nix-bin).
if command -v nix-instantiate >/dev/null; then
  env -i PATH="$PATH" HOME=/tmp/nixhome nice -n 10 lang/tests/corpus/regen.sh --check || failed=1
fi
KDEPLOY=target/ci/kdeploy nice -n 10 sh tests/stdlib/run.sh || failed=1

# Lints: formatting, clippy with warnings denied, shellcheck on every script
# (warnings and errors; the node program included).
section "lints"
cargo fmt --check || failed=1
nice -n 10 cargo clippy --workspace --all-targets --quiet -- -D warnings || failed=1
git ls-files -z '*.sh' .ci/run | xargs -0 shellcheck -S warning || failed=1

# The tests that need the whole lab, once the lanes' tests have all ended
# (these hold every node) and the rest above has too: compress counts on the
# deployer's spare CPU (its compressors run at nice 19), which clippy and
# the fuzz beside it had taken (a chunk went stored on a slow link in CI).
whole_lab_run() {
  until [[ -e $logs/etcd-lab-a.rc && -e $logs/etcd-lab.rc && -e $logs/kubernetes.rc ]]; do sleep 1; done
  "$lab_tests" "${whole_lab[@]}"
}
in_background whole-lab whole_lab_run
whole_lab_pid=$!

# waits for background part PID and shows its log; 1 when it failed
shown() {
  local pid=$1 what=$2 log=$3 st=0
  wait "$pid"
  [[ $(cat "${log%.log}.rc") == 0 ]] || st=1
  section "$what"
  cat "$log"
  ((st)) && echo "run-all: $what failed (above)" >&2
  return "$st"
}
shown "$etcd_a_pid" "the etcd lab tests pinned to lane A" "$logs/etcd-lab-a.log" || failed=1
shown "$etcd_pid" "the etcd lab tests in any lane" "$logs/etcd-lab.log" || failed=1
shown "$k8s_pid" "the Kubernetes lab tests" "$logs/kubernetes.log" || failed=1
shown "$whole_lab_pid" "the tests that need the whole lab" "$logs/whole-lab.log" || failed=1

section "the lab tests' hold on their nodes, longest first ($holds)"
sort -t $'\t' -k4.6gr "$holds" || true
if ((failed)); then
  echo "run-all: FAILED (each part's output is above) ($(date +%T))" >&2
  exit 1
fi
echo "run-all: everything passed ($(date +%T))"
