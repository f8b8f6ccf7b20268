#!/usr/bin/env bash
# Peer benchmark: `kdeploy switch tests/clusters/lab-etcd.nix` against the equivalent Ansible
# playbook (bench/ansible/), on the same three real lab nodes, in one run.
#
#   1. builds kdeploy (release, offline), installs ansible-core into bench/ansible/.venv
#      if missing, builds the lab's python image if missing (Ansible needs python3 on
#      the nodes; the same image is used for both tools);
#   2. kdeploy half: boots a FRESH lab (lab/lab.sh up 3 --python), times
#        first converge | no-op re-run ($RUNS times) | one containerd setting changed
#      (containerd.maxContainerLogLineSize 16384 -> 32768, in a temporary copy of
#      tests/clusters/lab-etcd.nix), peak RSS of each (GNU time %M), verifies the end state after
#      each converge (bench/ansible/verify.py), then takes the lab down;
#   3. Ansible half: boots a fresh lab again and does the same with ansible-playbook
#      (the change: the same setting in a temporary copy of the inventory's group_vars);
#   4. prints a markdown table and writes it to bench/results/<date>-<commit>/switch.md (raw
#      per-run numbers: switch-kdeploy.tsv, switch-ansible.tsv next to it; the output of
#      the last run of each workload: switch-logs/).
#
# Every converge is checked, and the run fails (exit 1) on any mismatch: the recap
# (first: no failure; no-op: kdeploy "unchanged" on every node / Ansible changed=0;
# change: kdeploy re-activates only container-runtime), the end state (verify.py: every
# file of every node's closure by sha256 and mode, directories, units active+enabled,
# generate-only phases written but not started, hooks' effects, etcd 3/3 healthy), and
# after the change that containerd restarted and etcd did not.
#
# The lab is shared: each half runs under `flock /tmp/kdeploy-lab.lock` and takes the lab
# down before releasing it.
#
# Usage: bench/switch.sh [all|kdeploy|ansible|report]     (default: all)
# Env:   RUNS=5 (kdeploy no-op repetitions), ANSIBLE_RUNS=3 (Ansible no-op repetitions: each
#        costs ~1 min on this loaded 2-core machine, and a half must hold the lab lock
#        for at most ~15 min), LOCK_WAIT=1800 (seconds to wait for the lab lock),
#        PROFILE=release (ci: the tests' build, no LTO: minutes instead of a release link)
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$PWD
RUNS=${RUNS:-5}
ANSIBLE_RUNS=${ANSIBLE_RUNS:-3}
LOCK=/tmp/kdeploy-lab.lock
LOCK_WAIT=${LOCK_WAIT:-1800}
source "$ROOT/bench/results-dir.sh"
source "$ROOT/bench/common.sh"
ANS=$ROOT/bench/ansible
VENV=$ANS/.venv
LAB_NIX=$ROOT/tests/clusters/lab-etcd.nix
SSHCFG=$ROOT/.lab/ssh_config

# The binary and the reference closures of this run (what verify.py checks against).
setup_work() {
	WORK=$(mktemp -d /tmp/kdeploy-switch-bench.XXXXXX)
	trap 'rm -rf "$WORK"' EXIT
	cp "target/${PROFILE:-release}/kdeploy" "$WORK/kdeploy"
	KD=$WORK/kdeploy
	mkdir -p "$WORK/changed"
	# one containerd setting, as tests/lab/switch.rs does
	sed 's/containerd.version = "1.6.20";/containerd.version = "1.6.20"; containerd.maxContainerLogLineSize = 32768;/' \
		"$LAB_NIX" >"$WORK/changed/lab.nix"
	grep -q maxContainerLogLineSize "$WORK/changed/lab.nix" || die "could not make the one-setting change"
	"$KD" eval "$LAB_NIX" --json >"$WORK/lab.json"
	"$KD" eval "$WORK/changed/lab.nix" --json >"$WORK/changed.json"
}

verify() { # verify TOOL CLUSTER_JSON
	python3 "$ANS/verify.py" "$2" --tool "$1" --ssh-config "$SSHCFG" >&2 || die "$1: end state differs from the closure"
}

# ActiveEnterTimestampMonotonic of a unit on node 2 (to tell restarted from untouched).
since() { "$ROOT"/lab/lab.sh ssh 2 "systemctl show -p ActiveEnterTimestampMonotonic --value $1"; }

# ---------------------------------------------------------------------------------------
kdeploy_half() {
	local tsv=$RESULTS/switch-kdeploy.tsv st i e1 c1 e2 c2
	printf 'workload\trun\tms\tpeak_kb\tcpu_ms\n' >"$tsv"
	echo "load_start $(loadavg)" >"$RESULTS/switch-kdeploy.load"
	lab_up
	local args=(--ssh-key "$ROOT/.lab/id_ed25519" --known-hosts "$ROOT/.lab/known_hosts"
		--store "$WORK/kstore" --secrets "$WORK/ksecrets" --output json)
	statuses() { python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(" ".join(sorted(n["status"] for n in j["nodes"].values())))' "$1"; }

	log "kdeploy: first converge"
	timed "$WORK/k-first" "$KD" switch "$LAB_NIX" "${args[@]}" || { cat "$WORK/k-first.stderr" >&2; die "kdeploy first converge failed"; }
	st=$(statuses "$WORK/k-first.stdout")
	[[ $st == "changed changed changed" ]] || die "kdeploy first converge: statuses $st"
	record "$tsv" first 1
	log "kdeploy: first converge ${T_MS} ms, peak $((T_KB / 1024)) MB"
	verify kdeploy "$WORK/lab.json"

	for ((i = 1; i <= RUNS; i++)); do
		timed "$WORK/k-noop" "$KD" switch "$LAB_NIX" "${args[@]}" || { cat "$WORK/k-noop.stderr" >&2; die "kdeploy no-op failed"; }
		st=$(statuses "$WORK/k-noop.stdout")
		[[ $st == "unchanged unchanged unchanged" ]] || die "kdeploy no-op $i: statuses $st"
		record "$tsv" noop "$i"
		log "kdeploy: no-op $i: ${T_MS} ms, peak $((T_KB / 1024)) MB"
	done
	verify kdeploy "$WORK/lab.json"

	e1=$(since etcd.service)
	c1=$(since containerd.service)
	log "kdeploy: one containerd setting changed"
	timed "$WORK/k-change" "$KD" switch "$WORK/changed/lab.nix" "${args[@]}" || { cat "$WORK/k-change.stderr" >&2; die "kdeploy change failed"; }
	python3 - "$WORK/k-change.stdout" <<'EOF' || die "kdeploy change: unexpected recap"
import json, sys
j = json.load(open(sys.argv[1]))
for name, n in j["nodes"].items():
    assert n["status"] == "changed", (name, n)
    assert n["phases"] == ["container-runtime"], (name, n["phases"])
    assert n["units"]["restarted"] == ["containerd.service"], (name, n["units"])
EOF
	record "$tsv" change 1
	log "kdeploy: change ${T_MS} ms, peak $((T_KB / 1024)) MB"
	verify kdeploy "$WORK/changed.json"
	e2=$(since etcd.service)
	c2=$(since containerd.service)
	[[ $e1 == "$e2" ]] || die "kdeploy change restarted etcd"
	[[ $c1 != "$c2" ]] || die "kdeploy change did not restart containerd"
	echo "load_end $(loadavg)" >>"$RESULTS/switch-kdeploy.load"
	keep_logs k switch first noop change
}

# ---------------------------------------------------------------------------------------
ansible_recap_ok() { # FILE MODE(first|noop|change)
	python3 - "$1" "$2" <<'EOF'
import re, sys
text, mode = open(sys.argv[1]).read(), sys.argv[2]
rows = re.findall(r"^(\S+)\s+: ok=(\d+)\s+changed=(\d+)\s+unreachable=(\d+)\s+failed=(\d+)", text, re.M)
hosts = {h: (int(ok), int(ch), int(un), int(fa)) for h, ok, ch, un, fa in rows}
assert sorted(hosts) == ["k8s-master", "k8s-worker01", "k8s-worker02"], hosts
for h, (ok, ch, un, fa) in hosts.items():
    assert un == 0 and fa == 0, (h, "unreachable/failed", un, fa)
    if mode == "noop":
        assert ch == 0, (h, "changed on a no-op run", ch)
    else:
        assert ch > 0, (h, "nothing changed", ch)
print(" ".join(f"{h}:ok={v[0]},changed={v[1]}" for h, v in sorted(hosts.items())))
EOF
}

ansible_half() {
	local tsv=$RESULTS/switch-ansible.tsv i e1 c1 e2 c2 inv
	printf 'workload\trun\tms\tpeak_kb\tcpu_ms\n' >"$tsv"
	echo "load_start $(loadavg)" >"$RESULTS/switch-ansible.load"
	lab_up
	# ControlPersist masters live in this run's own directory (closed at the end).
	export ANSIBLE_CONFIG=$ANS/ansible.cfg ANSIBLE_SSH_CONTROL_PATH_DIR=$WORK/cp ANSIBLE_NOCOLOR=1
	mkdir -p "$WORK/cp"
	local ap=("$VENV/bin/ansible-playbook")
	cd "$ANS"

	log "ansible: first converge"
	timed "$WORK/a-first" "${ap[@]}" site.yml || { tail -n 40 "$WORK/a-first.stdout" >&2; die "ansible first converge failed"; }
	ansible_recap_ok "$WORK/a-first.stdout" first >&2 || die "ansible first converge: bad recap"
	record "$tsv" first 1
	log "ansible: first converge ${T_MS} ms, peak $((T_KB / 1024)) MB"
	cd "$ROOT"
	verify ansible "$WORK/lab.json"
	cd "$ANS"

	for ((i = 1; i <= ANSIBLE_RUNS; i++)); do
		timed "$WORK/a-noop" "${ap[@]}" site.yml || { tail -n 40 "$WORK/a-noop.stdout" >&2; die "ansible no-op failed"; }
		ansible_recap_ok "$WORK/a-noop.stdout" noop >&2 || die "ansible no-op $i: bad recap"
		record "$tsv" noop "$i"
		log "ansible: no-op $i: ${T_MS} ms, peak $((T_KB / 1024)) MB"
	done
	cd "$ROOT"
	verify ansible "$WORK/lab.json"

	# the same setting, changed where an Ansible user changes it: the inventory's group_vars
	inv=$WORK/inventory
	cp -r "$ANS/inventory" "$inv"
	sed -i 's/^containerd_max_container_log_line_size: 16384$/containerd_max_container_log_line_size: 32768/' \
		"$inv/group_vars/all/containerd.yml"
	grep -q 'containerd_max_container_log_line_size: 32768' "$inv/group_vars/all/containerd.yml" || die "could not change the inventory"
	e1=$(since etcd.service)
	c1=$(since containerd.service)
	cd "$ANS"
	log "ansible: one containerd setting changed"
	timed "$WORK/a-change" "${ap[@]}" -i "$inv/hosts.yaml" site.yml || { tail -n 40 "$WORK/a-change.stdout" >&2; die "ansible change failed"; }
	ansible_recap_ok "$WORK/a-change.stdout" change >&2 || die "ansible change: bad recap"
	record "$tsv" change 1
	log "ansible: change ${T_MS} ms, peak $((T_KB / 1024)) MB"
	cd "$ROOT"
	verify ansible "$WORK/changed.json"
	e2=$(since etcd.service)
	c2=$(since containerd.service)
	[[ $e1 == "$e2" ]] || die "ansible change restarted etcd"
	[[ $c1 != "$c2" ]] || die "ansible change did not restart containerd"
	echo "load_end $(loadavg)" >>"$RESULTS/switch-ansible.load"
	keep_logs a switch first noop change
	close_masters
}


# ---------------------------------------------------------------------------------------
report() {
	python3 - "$RESULTS" "$RUNS" "$(git rev-parse --short HEAD)" "$("$VENV/bin/ansible" --version 2>/dev/null | awk 'NR == 1')" <<'EOF'
import os, statistics, subprocess, sys, platform
res, runs, commit, ansv = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
def load(tool):
    rows = [l.rstrip("\n").split("\t") for l in open(f"{res}/switch-{tool}.tsv")][1:]
    d = {}
    for w, r, ms, kb, cpu in rows:
        d.setdefault(w, []).append((int(ms), int(kb), int(cpu)))
    la = dict(l.split(" ", 1) for l in open(f"{res}/switch-{tool}.load").read().splitlines())
    return d, la
k, kl = load("kdeploy")
a, al = load("ansible")
def fmt(ms):
    return f"{ms/1000:.2f} s" if ms >= 1000 else f"{ms} ms"
def cell(d, w):
    v = [x[0] for x in d[w]]
    med = statistics.median(v)
    s = fmt(med)
    if len(v) > 1:
        s += f" ({fmt(min(v))}–{fmt(max(v))})"
    return med, s
def peak(d, w):
    return max(x[1] for x in d[w]) / 1024
def cpu(d, w):
    return statistics.median(x[2] for x in d[w])
names = {"first": "first converge (fresh nodes)", "noop": f"no-op re-run (median of {len(k['noop'])} / {len(a['noop'])})",
         "change": "one containerd setting changed"}
out = []
cpu_model = subprocess.run(["sh", "-c", "grep -m1 'model name' /proc/cpuinfo | cut -d: -f2"], capture_output=True, text=True).stdout.strip()
mem = int(open("/proc/meminfo").readline().split()[1]) / 1024 / 1024
out.append(f"- machine: {os.cpu_count()} CPUs ({cpu_model}), {mem:.1f} GiB RAM, Linux {platform.release()}; "
           "the lab's 3 nodes are nspawn containers on the same machine")
out.append(f"- kdeploy: commit {commit} ({os.environ.get('PROFILE', 'release')} profile); {ansv}, controller Python {platform.python_version()}")
out.append(f"- load average (1/5/15 min): kdeploy half {kl['load_start']} → {kl['load_end']}; "
           f"Ansible half {al['load_start']} → {al['load_end']}")
out.append(f"- wall time: median (min–max) over the runs; CPU = user+sys of the tool and the children "
           "it waited for (median; Ansible's ControlPersist ssh masters are not included); "
           "peak = GNU time %M (the largest single process), max over the runs")
out.append("")
out.append("| workload | kdeploy time | ansible time | ratio (ansible/kdeploy) | kdeploy CPU | ansible CPU | CPU ratio | kdeploy peak MB | ansible peak MB |")
out.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
targets = []
for w in ("first", "noop", "change"):
    km, ks = cell(k, w)
    am, as_ = cell(a, w)
    kc, ac = cpu(k, w), cpu(a, w)
    out.append(f"| {names[w]} | {ks} | {as_} | {am/km:.1f}× | {fmt(kc)} | {fmt(ac)} | {ac/max(kc, 1):.1f}× "
               f"| {peak(k, w):.0f} | {peak(a, w):.0f} |")
kn, an = statistics.median(x[0] for x in k["noop"]), statistics.median(x[0] for x in a["noop"])
kf, af = k["first"][0][0], a["first"][0][0]
kp = max(x[1] for w in k for x in k[w]) / 1024
out.append("")
out.append("Targets (3 nodes):")
def t(ok, text):
    out.append(f"- {'met' if ok else 'NOT met'}: {text}")
t(kn < 500, f"kdeploy no-op under 0.5 s ({fmt(kn)})")
t(an / kn >= 20, f"kdeploy no-op at least 20× faster than Ansible's ({an/kn:.1f}×)")
t(af / kf >= 5, f"first converge at least 5× faster ({af/kf:.1f}×)")
t(kp < 64, f"kdeploy peak memory under 64 MB ({kp:.0f} MB, max over all runs)")
out.append("")
out.append("Every converge was verified (recap, then every file of every node's closure by sha256 and "
           "mode, directories, units active and enabled, generate-only phases written and not started, "
           "hooks' effects, etcd 3/3 healthy; after the change: containerd restarted, etcd not).")
text = "\n".join(out) + "\n"
open(f"{res}/switch.md", "w").write("# `kdeploy switch` vs Ansible on the 3-node lab\n\n" + text)
print(text)
EOF
}

cmd=${1:-all}
case $cmd in
all)
	prepare
	setup_work
	locked kdeploy
	locked ansible
	report
	;;
kdeploy | ansible)
	prepare
	setup_work
	locked "$cmd"
	;;
report) report ;;
*)
	echo "usage: bench/switch.sh [all|kdeploy|ansible|report]" >&2
	exit 2
	;;
esac
