# shellcheck shell=bash
# Sourced by the peer benchmarks (bench/switch.sh, bench/day2.sh): logging, timing
# with GNU time, the lab lifecycle and the lab lock. Expects ROOT, LOCK, LOCK_WAIT and
# VENV (prepare: the ansible-core venv), WORK (close_masters); a script defines ${half}_half functions for `locked`.

log() { printf '== %s\n' "$*" >&2; }
die() {
	printf '%s: FAIL: %s\n' "$(basename "$0")" "$*" >&2
	exit 1
}
now_ns() { date +%s%N; }
loadavg() { cut -d' ' -f1-3 /proc/loadavg; }

# timed OUT_PREFIX CMD...: runs CMD with GNU time; sets T_MS (wall, ms), T_KB (peak RSS of
# the largest process) and T_CPU (user+sys ms of CMD and the children it waited for).
timed() {
	local out=$1 rc=0 t0 t1
	shift
	t0=$(now_ns)
	/usr/bin/time -f '%M %U %S' -o "$out.rss" "$@" >"$out.stdout" 2>"$out.stderr" || rc=$?
	t1=$(now_ns)
	T_MS=$(((t1 - t0) / 1000000))
	read -r T_KB T_CPU < <(tail -n 1 "$out.rss" | awk '{ printf "%d %d\n", $1, ($2 + $3) * 1000 }')
	return $rc
}

record() { # record TSV WORKLOAD RUN
	printf '%s\t%s\t%s\t%s\t%s\n' "$2" "$3" "$T_MS" "$T_KB" "$T_CPU" >>"$1"
}

close_masters() {
	local s n=0
	for s in "${WORK:-/nonexistent}"/cp/*; do
		[[ -S $s ]] || continue
		n=$((n + 1))
		ssh -o ControlPath="$s" -O exit dummy >/dev/null 2>&1 || true
	done
	((n == 0)) || log "closed $n ssh ControlPersist master(s)"
}

# One half under the lab lock; the lab goes down before the lock is released.
locked() { # locked kdeploy|ansible
	local half=$1
	exec 7>"$LOCK"
	log "$half half: waiting for the lab lock ($LOCK)"
	flock -w "$LOCK_WAIT" 7 || die "lab lock not acquired within ${LOCK_WAIT}s"
	local t0=$SECONDS rc=0
	set +e
	(
		set -e
		trap 'close_masters; "$ROOT"/lab/lab.sh down >/dev/null 2>&1 || true' EXIT
		"${half}_half"
	)
	rc=$?
	set -e
	"$ROOT"/lab/lab.sh status >/dev/null 2>&1 && "$ROOT"/lab/lab.sh down >/dev/null 2>&1
	log "$half half: $((SECONDS - t0)) s with the lab lock; lab down"
	flock -u 7
	exec 7>&-
	return $rc
}

lab_up() { # lab_up [N]: a fresh lab of N nodes (3) on the python image
	local n=${1:-3} i
	log "booting a fresh lab ($n nodes, python image)"
	"$ROOT"/lab/lab.sh down >/dev/null 2>&1 || true
	"$ROOT"/lab/lab.sh up "$n" --python >/dev/null
	for ((i = 1; i <= n; i++)); do
		"$ROOT"/lab/lab.sh ssh "$i" 'python3 -c "import shutil, json, tempfile"' ||
			die "node $i has no usable Python (Ansible needs its standard library)"
	done
}


prepare() {
	command -v /usr/bin/time >/dev/null || die "GNU time missing (apt-get install time)"
	log "building kdeploy (cargo build --profile ${PROFILE:-release} --offline)"
	cargo build --profile "${PROFILE:-release}" --offline --quiet --bin kdeploy
	if [[ ! -x $VENV/bin/ansible-playbook ]]; then
		log "installing ansible-core into $VENV"
		python3 -m venv "$VENV"
		"$VENV/bin/pip" install -q 'ansible-core>=2.18,<2.19'
	fi
	"$ROOT"/lab/lab.sh image --python >/dev/null
}

# keep_logs k|a BENCH WORKLOAD...: the output of the last run of each workload, next to
# the results ($RESULTS/BENCH-logs/TOOL-WORKLOAD.log).
keep_logs() {
	local prefix=$1 bench=$2 tool=kdeploy w
	shift 2
	[[ $prefix == a ]] && tool=ansible
	mkdir -p "$RESULTS/$bench-logs"
	for w in "$@"; do
		cat "$WORK/$prefix-$w.stdout" "$WORK/$prefix-$w.stderr" >"$RESULTS/$bench-logs/$tool-$w.log" 2>/dev/null || true
	done
}
