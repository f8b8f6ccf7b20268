# shellcheck shell=bash
# Sourced by the benchmarks of one kdeploy build on the 3-node etcd lab (bench/noop.sh,
# bench/transfer.sh): the results directory, common.sh with the lab lock, and
# lab_bench_setup. Expects ROOT; reads PROFILE (release: the build users run; ci: the
# tests' build, no LTO).
PROFILE=${PROFILE:-release}
source "$ROOT/bench/results-dir.sh"
# (read by common.sh's `locked`)
# shellcheck disable=SC2034
LOCK=/tmp/kdeploy-lab.lock LOCK_WAIT=1800
source "$ROOT/bench/common.sh"

# lab_bench_setup NAME: builds kdeploy (PROFILE) and sets WORK (a directory removed on
# exit) and KD (the binary, copied there), with the lab's definition as WORK/lab.nix.
lab_bench_setup() {
	WORK=$(mktemp -d "/tmp/kdeploy-$1-bench.XXXXXX")
	trap 'rm -rf "$WORK"' EXIT
	log "building kdeploy (cargo build --profile $PROFILE)"
	cargo build --profile "$PROFILE" --quiet --bin kdeploy
	cp "target/$PROFILE/kdeploy" "$WORK/kdeploy"
	cp "$ROOT/tests/clusters/lab-etcd.nix" "$WORK/lab.nix"
	# shellcheck disable=SC2034  # (the sourcing script's)
	KD=$WORK/kdeploy
}
