#!/usr/bin/env bash
# Issue 32's figures ("at the physical limit"), one run of each, every figure beside its
# peer measured in the same script: bench/noop.sh (the 3-node no-op against OpenSSH's
# round trip), bench/transfer.sh (the first converge's bytes against OpenSSH's `cat`),
# bench/switch.sh (first converge, no-op and one change against the lean Ansible
# playbook), bench/scale-lab.sh 50 (the 50-node no-op and transfer, over SSH) and
# bench/lang.sh (the evaluator against Nix). Release profile, built once by the first.
#
# The language bench runs last, once the 50-node lab is down and the machine has settled
# (1-minute load under 1.5, or after 5 minutes with a warning in its log): stopping 50
# nodes leaves the load above 25 for a minute, and the evaluator's times are milliseconds.
#
# Results: bench/results/<date>-<commit>[-dirty]-runN/<bench>/ and <bench>.log beside.
# Usage: bench/limit.sh N      (N names the run: run the script twice for "two runs")
# Env:   LANG_RUNS=10 (bench/lang.sh's RUNS); the others use each script's defaults.
set -uo pipefail
cd "$(dirname "$0")/.." || exit
ROOT=$PWD
run=${1:?usage: bench/limit.sh N}
RESULTS_SUFFIX=-run$run
source "$ROOT/bench/results-dir.sh"
export PROFILE=release
KD=$ROOT/target/release/kdeploy
status=0

step() { # step NAME CMD...: runs CMD with RESULTS=RESULTS/NAME, its output in NAME.log
	local name=$1 start rc
	shift
	start=$(date +%s)
	echo "== $name ($(date -u +%T), load $(cut -d' ' -f1-3 /proc/loadavg))"
	RESULTS=$RESULTS/$name "$@" >"$RESULTS/$name.log" 2>&1
	rc=$?
	echo "== $name: exit $rc after $(($(date +%s) - start)) s"
	((rc == 0)) || status=1
}

settle() { # waits (at most 5 min) for the 1-minute load to fall under 1.5
	local i
	for ((i = 0; i < 60; i++)); do
		awk '{ exit !($1 < 1.5) }' /proc/loadavg && return
		sleep 5
	done
	echo "warning: load still $(cut -d' ' -f1-3 /proc/loadavg) after 5 minutes" | tee -a "$RESULTS/lang.log"
}

step noop bench/noop.sh
step transfer bench/transfer.sh
step switch bench/switch.sh
step scale-lab env MODES=ssh KDEPLOY="$KD" bench/scale-lab.sh 50
settle
step lang env RUNS="${LANG_RUNS:-10}" KDEPLOY="$KD" bench/lang.sh
echo "results: ${RESULTS#"$ROOT"/}"
exit $status
