#!/usr/bin/env bash
# The no-op re-run against its floor, on the 3-node etcd lab (tests/clusters/lab-etcd.nix),
# in one run:
#   1. builds kdeploy (release), boots a fresh 3-node lab, converges it once;
#   2. times with hyperfine (--warmup 2, --runs $RUNS) the no-op `kdeploy switch` as a user
#      runs it (the evaluation cache and the hash index warm, the connections kept between
#      runs by kdeploy's keeper: the default --persist 60), the same connecting anew each
#      run (--persist 0), and with --no-eval-cache too (evaluated again; the deployer's
#      binaries known by the hash index), `kdeploy plan` both ways (the evaluation alone,
#      no node), and the floor of the transport:
#      one OpenSSH round trip to the three nodes in parallel (`true`), a new connection
#      each, and again over connections kept by ControlPersist (as Ansible runs);
#   3. times the node's own drift check (`status --verify`, 50 times on kdnode1) the
#      quick way (verify.ok kept by the last run) and the full way (verify.ok moved aside);
#   4. writes bench/results/<date>-<commit>/noop.md, the hyperfine JSON beside it, and
#      takes the lab down.
# Every no-op is checked: the recap must say `unchanged` for the three nodes.
#
# Usage: bench/noop.sh     Env: RUNS=20, PROFILE=release (ci: the tests' build, no LTO)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
RUNS=${RUNS:-20}
source "$ROOT/bench/lab-bench.sh"
command -v hyperfine >/dev/null || die "hyperfine missing (apt-get install hyperfine)"

lab_bench_setup noop
ARGS="--ssh-key $ROOT/.lab/id_ed25519 --known-hosts $ROOT/.lab/known_hosts --output json"
SSH="ssh -F $ROOT/.lab/ssh_config"

kdeploy_half() {
	"$ROOT"/lab/lab.sh down >/dev/null 2>&1 || true
	"$ROOT"/lab/lab.sh up 3 >/dev/null
	log "first converge"
	# shellcheck disable=SC2086
	"$KD" switch "$WORK/lab.nix" $ARGS >"$WORK/first.json" || die "first converge failed"
	# shellcheck disable=SC2086
	"$KD" switch "$WORK/lab.nix" --persist 0 $ARGS >"$WORK/noop.json"
	[[ $(jq -r '[.nodes[].status] | unique | join(" ")' "$WORK/noop.json") == unchanged ]] ||
		die "the re-run with --persist 0 was not a no-op: $(cat "$WORK/noop.json")"
	# shellcheck disable=SC2086
	"$KD" switch "$WORK/lab.nix" $ARGS >"$WORK/noop.json"
	[[ $(jq -r '[.nodes[].status] | unique | join(" ")' "$WORK/noop.json") == unchanged ]] ||
		die "the re-run was not a no-op: $(cat "$WORK/noop.json")"
	local nodes="kdnode1 kdnode2 kdnode3"
	log "hyperfine: no-op switch, plan, and the OpenSSH floor ($RUNS runs each)"
	hyperfine --warmup 2 --runs "$RUNS" --export-json "$RESULTS/noop.json" --style basic \
		-n "switch (no-op; default: connections kept)" "$KD switch $WORK/lab.nix $ARGS" \
		-n "switch --persist 0 (no-op, connecting anew)" "$KD switch $WORK/lab.nix --persist 0 $ARGS" \
		-n "switch --persist 0 --no-eval-cache (no-op)" "$KD switch $WORK/lab.nix --persist 0 --no-eval-cache $ARGS" \
		-n "plan" "$KD plan $WORK/lab.nix" \
		-n "plan --no-eval-cache" "$KD plan $WORK/lab.nix --no-eval-cache" \
		-n "OpenSSH: true on 3 nodes, in parallel" \
		"for n in $nodes; do $SSH -o ControlPath=none \$n true & done; wait" \
		-n "OpenSSH: true on 3 nodes, in parallel, connections kept (ControlPersist)" \
		"for n in $nodes; do $SSH -o ControlMaster=auto -o ControlPath=$WORK/cm-%h -o ControlPersist=60 \$n true & done; wait" \
		>"$WORK/hyperfine.txt"
	for n in $nodes; do $SSH -o ControlPath="$WORK/cm-%h" -O exit "$n" >/dev/null 2>&1 || true; done
	pkill -f "^$KD keeper " || true
	# shellcheck disable=SC2086
	"$KD" switch "$WORK/lab.nix" $ARGS >"$WORK/noop.json"
	[[ $(jq -r '[.nodes[].status] | unique | join(" ")' "$WORK/noop.json") == unchanged ]] ||
		die "the last re-run was not a no-op"
	log "the node's drift check, 50 times each way"
	local node_prog
	node_prog=$($SSH kdnode1 'ls /var/lib/kdeploy/bin/node-*.sh | head -n 1')
	# shellcheck disable=SC2016
	$SSH kdnode1 "set -e; p=$node_prog; t() { s=\$(date +%s%N); for i in \$(seq 50); do sh \$p --protocol 3 status --verify >/dev/null; done; echo \$(( (\$(date +%s%N) - s) / 50000 )); }
		test -f /var/lib/kdeploy/verify.ok; q=\$(t); mv /var/lib/kdeploy/verify.ok /tmp/verify.ok; f=\$(t); mv /tmp/verify.ok /var/lib/kdeploy/verify.ok
		echo \"quick \$q\"; echo \"full \$f\"" >"$WORK/node.txt"
	"$ROOT"/lab/lab.sh down >/dev/null 2>&1 || true
}
locked kdeploy

row() { jq -r --arg n "$1" '.results[] | select(.command == $n) | "\(.mean * 1000 | floor) ms ± \(.stddev * 1000 | floor) (min \(.min * 1000 | floor), median \(.median * 1000 | floor))"' "$RESULTS/noop.json"; }
{
	echo "# No-op re-run, 3-node etcd lab ($(git rev-parse --short HEAD), $(date -u +%Y-%m-%d), RUNS=$RUNS, profile $PROFILE)"
	echo
	echo "| measure | time |"
	echo "|---|---|"
	for n in "switch (no-op; default: connections kept)" "switch --persist 0 (no-op, connecting anew)" \
		"switch --persist 0 --no-eval-cache (no-op)" "plan" \
		"plan --no-eval-cache" "OpenSSH: true on 3 nodes, in parallel" \
		"OpenSSH: true on 3 nodes, in parallel, connections kept (ControlPersist)"; do
		echo "| $n | $(row "$n") |"
	done
	echo "| node: \`status --verify\` the quick way (verify.ok kept by the last run), per call | $(awk '/^quick/ { print $2 }' "$WORK/node.txt") µs |"
	echo "| node: \`status --verify\` the full way (verify.ok moved aside), per call | $(awk '/^full/ { print $2 }' "$WORK/node.txt") µs |"
} >"$RESULTS/noop.md"
cp "$WORK/node.txt" "$RESULTS/noop-node.txt"
cat "$RESULTS/noop.md"
