#!/usr/bin/env bash
# Day-two peer benchmark: adding one worker to the converged lab, then resetting every
# node, with kdeploy and with the Ansible peer (bench/ansible/: site.yml with the new host
# in the inventory, as Kubespray's scale.yml converges it; reset.yml, shaped like
# Kubespray's reset.yml), on the same real lab nodes, in one run.
#
#   1. builds kdeploy, installs ansible-core into bench/ansible/.venv if missing;
#   2. kdeploy half: a fresh 4-node lab; converges the 3-node tests/clusters/lab-etcd.nix (not
#      timed), then times
#        add    the same file with k8s-worker03 (10.77.0.14, worker) added: switch
#        reset  kdeploy reset --yes of all four nodes
#      and checks each: the new node runs containerd and no etcd, etcd on the members was
#      not restarted, every node reported; after the reset no node runs etcd or
#      containerd or holds their units, data or configuration;
#   3. Ansible half: the same on a fresh lab with ansible-playbook (site.yml with the
#      3-node inventory, then with the 4-node one; reset.yml), with the same checks;
#   4. prints a markdown table, written to bench/results/<date>-<commit>/day2.md (raw
#      numbers: day2-kdeploy.tsv, day2-ansible.tsv; outputs: day2-logs/).
#
# Usage: bench/day2.sh [all|kdeploy|ansible|report]     (default: all)
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$PWD
LOCK=/tmp/kdeploy-lab.lock
LOCK_WAIT=${LOCK_WAIT:-1800}
source "$ROOT/bench/results-dir.sh"
source "$ROOT/bench/common.sh"
ANS=$ROOT/bench/ansible
VENV=$ANS/.venv
NEW=k8s-worker03
NEW_ADDR=10.77.0.14

setup_work() {
	WORK=$(mktemp -d /tmp/kdeploy-day2-bench.XXXXXX)
	trap 'rm -rf "$WORK"' EXIT
	cp target/release/kdeploy "$WORK/kdeploy"
	KD=$WORK/kdeploy
	mkdir -p "$WORK/project"
	cp tests/clusters/lab-etcd.nix "$WORK/lab3.nix"
	sed "s|    k8s-worker02 = { address = \"10.77.0.13\"; roles = \[ \"worker\" \"etcd\" \]; };|&\n    $NEW = { address = \"$NEW_ADDR\"; roles = [ \"worker\" ]; };|" \
		tests/clusters/lab-etcd.nix >"$WORK/lab4.nix"
	grep -q "$NEW" "$WORK/lab4.nix" || die "could not add $NEW to the cluster file"
}

# ActiveEnterTimestampMonotonic of a unit on lab node N.
since() { "$ROOT"/lab/lab.sh ssh "$1" "systemctl show -p ActiveEnterTimestampMonotonic --value $2"; }

# The new node runs containerd and no etcd.
check_added() {
	"$ROOT"/lab/lab.sh ssh 4 'systemctl is-active --quiet containerd.service && ! systemctl is-active --quiet etcd.service' ||
		die "$1: $NEW does not run containerd alone"
}

# No node runs etcd or containerd, or holds their units, data or configuration.
check_clean() {
	local i
	for i in 1 2 3 4; do
		"$ROOT"/lab/lab.sh ssh "$i" '
			for u in etcd.service containerd.service; do
				if systemctl is-active --quiet $u; then echo "$u still active"; exit 1; fi
				if [ -e /etc/systemd/system/$u ]; then echo "$u still installed"; exit 1; fi
			done
			for p in /var/lib/etcd /etc/etcd.env /etc/containerd /var/lib/containerd /usr/local/bin/etcd; do
				if [ -e $p ]; then echo "$p still there"; exit 1; fi
			done' || die "$1: node $i is not clean after the reset"
	done
}

kdeploy_half() {
	local tsv=$RESULTS/day2-kdeploy.tsv e1 e2
	printf 'workload\trun\tms\tpeak_kb\tcpu_ms\n' >"$tsv"
	echo "load_start $(loadavg)" >"$RESULTS/day2-kdeploy.load"
	lab_up 4
	export KDEPLOY_SECRETS=$WORK/project/.kdeploy/secrets
	local args=(--ssh-key "$ROOT/.lab/id_ed25519" --known-hosts "$ROOT/.lab/known_hosts" --output json)
	cp "$WORK/lab3.nix" "$WORK/project/lab.nix"
	log "kdeploy: converging the 3-node lab (not timed)"
	"$KD" switch "$WORK/project/lab.nix" "${args[@]}" >"$WORK/k-setup.stdout" 2>"$WORK/k-setup.stderr" ||
		{ cat "$WORK/k-setup.stderr" >&2; die "kdeploy setup converge failed"; }

	e1=$(since 2 etcd.service)
	cp "$WORK/lab4.nix" "$WORK/project/lab.nix"
	log "kdeploy: adding $NEW"
	timed "$WORK/k-add" "$KD" switch "$WORK/project/lab.nix" "${args[@]}" ||
		{ cat "$WORK/k-add.stderr" >&2; die "kdeploy add failed"; }
	python3 - "$WORK/k-add.stdout" "$NEW" <<'EOF' >&2 || die "kdeploy add: unexpected recap"
import json, sys
j, new = json.load(open(sys.argv[1])), sys.argv[2]
assert len(j["nodes"]) == 4 and j["nodes"][new]["status"] == "changed", j["nodes"].keys()
print(" ".join(f"{n}:{v['status']}:{','.join(v.get('phases', []))}" for n, v in sorted(j["nodes"].items())))
EOF
	record "$tsv" add 1
	log "kdeploy: add ${T_MS} ms, peak $((T_KB / 1024)) MB"
	check_added kdeploy
	e2=$(since 2 etcd.service)
	[[ $e1 == "$e2" ]] || die "kdeploy add restarted etcd on a member"

	log "kdeploy: reset of all four nodes"
	timed "$WORK/k-reset" "$KD" reset "$WORK/project/lab.nix" --yes "${args[@]}" ||
		{ cat "$WORK/k-reset.stderr" >&2; die "kdeploy reset failed"; }
	record "$tsv" reset 1
	log "kdeploy: reset ${T_MS} ms, peak $((T_KB / 1024)) MB"
	check_clean kdeploy
	echo "load_end $(loadavg)" >>"$RESULTS/day2-kdeploy.load"
	keep_logs k day2 add reset
}

ansible_recap_ok() { # FILE HOST...: every host ran, none failed or unreachable
	python3 - "$@" <<'EOF'
import re, sys
text, want = open(sys.argv[1]).read(), sorted(sys.argv[2:])
rows = re.findall(r"^(\S+)\s+: ok=(\d+)\s+changed=(\d+)\s+unreachable=(\d+)\s+failed=(\d+)", text, re.M)
hosts = {h: (int(ok), int(ch), int(un), int(fa)) for h, ok, ch, un, fa in rows}
assert sorted(hosts) == want, hosts
assert all(v[2] == 0 and v[3] == 0 for v in hosts.values()), hosts
print(" ".join(f"{h}:ok={v[0]},changed={v[1]}" for h, v in sorted(hosts.items())))
EOF
}

ansible_half() {
	local tsv=$RESULTS/day2-ansible.tsv e1 e2 inv=$WORK/inventory
	printf 'workload\trun\tms\tpeak_kb\tcpu_ms\n' >"$tsv"
	echo "load_start $(loadavg)" >"$RESULTS/day2-ansible.load"
	lab_up 4
	export ANSIBLE_CONFIG=$ANS/ansible.cfg ANSIBLE_SSH_CONTROL_PATH_DIR=$WORK/cp ANSIBLE_NOCOLOR=1
	mkdir -p "$WORK/cp"
	local ap=("$VENV/bin/ansible-playbook")
	# the new host where a Kubespray user puts it: the inventory, in kube_node
	cp -r "$ANS/inventory" "$inv"
	"$VENV/bin/python" - "$inv/hosts.yaml" "$NEW" "$NEW_ADDR" <<'EOF'
import sys, yaml
path, name, addr = sys.argv[1:]
inv = yaml.safe_load(open(path))
inv["all"]["hosts"][name] = {"ansible_host": addr, "ip": addr}
inv["all"]["children"]["kube_node"]["hosts"][name] = None
yaml.safe_dump(inv, open(path, "w"))
EOF
	cd "$ANS"
	log "ansible: converging the 3-node lab (not timed)"
	"${ap[@]}" site.yml >"$WORK/a-setup.stdout" 2>&1 || { tail -n 40 "$WORK/a-setup.stdout" >&2; die "ansible setup failed"; }

	e1=$(since 2 etcd.service)
	log "ansible: adding $NEW"
	timed "$WORK/a-add" "${ap[@]}" -i "$inv/hosts.yaml" site.yml ||
		{ tail -n 40 "$WORK/a-add.stdout" >&2; die "ansible add failed"; }
	ansible_recap_ok "$WORK/a-add.stdout" k8s-master k8s-worker01 k8s-worker02 "$NEW" >&2 || die "ansible add: bad recap"
	record "$tsv" add 1
	log "ansible: add ${T_MS} ms, peak $((T_KB / 1024)) MB"
	check_added ansible
	e2=$(since 2 etcd.service)
	[[ $e1 == "$e2" ]] || die "ansible add restarted etcd on a member"

	log "ansible: reset of all four nodes"
	timed "$WORK/a-reset" "${ap[@]}" -i "$inv/hosts.yaml" reset.yml ||
		{ tail -n 40 "$WORK/a-reset.stdout" >&2; die "ansible reset failed"; }
	ansible_recap_ok "$WORK/a-reset.stdout" k8s-master k8s-worker01 k8s-worker02 "$NEW" >&2 || die "ansible reset: bad recap"
	record "$tsv" reset 1
	log "ansible: reset ${T_MS} ms, peak $((T_KB / 1024)) MB"
	cd "$ROOT"
	check_clean ansible
	echo "load_end $(loadavg)" >>"$RESULTS/day2-ansible.load"
	keep_logs a day2 add reset
	close_masters
}


report() {
	python3 - "$RESULTS" "$(git rev-parse --short HEAD)" "$("$VENV/bin/ansible" --version 2>/dev/null | awk 'NR == 1')" <<'EOF' | tee "$RESULTS/day2.md"
import sys
res, commit, ansv = sys.argv[1:]
def load(tool):
    rows = [l.rstrip("\n").split("\t") for l in open(f"{res}/day2-{tool}.tsv")][1:]
    la = dict(l.split(" ", 1) for l in open(f"{res}/day2-{tool}.load").read().splitlines())
    return {w: (int(ms), int(kb), int(cpu)) for w, _, ms, kb, cpu in rows}, la
(k, kl), (a, al) = load("kdeploy"), load("ansible")
fmt = lambda ms: f"{ms/1000:.2f} s" if ms >= 1000 else f"{ms} ms"
print(f"- kdeploy: commit {commit} (release); {ansv}")
print(f"- load average: kdeploy half {kl['load_start']} → {kl['load_end']}; Ansible half {al['load_start']} → {al['load_end']}")
print("- one run of each workload on a fresh 4-node lab per tool; CPU = user+sys of the tool and the children it waited for")
print()
print("| workload | kdeploy time | ansible time | ratio (ansible/kdeploy) | kdeploy CPU | ansible CPU | kdeploy peak MB | ansible peak MB |")
print("|---|---:|---:|---:|---:|---:|---:|---:|")
names = {"add": "add one worker to the converged 3-node lab", "reset": "reset all four nodes"}
for w in ("add", "reset"):
    (km, kkb, kc), (am, akb, ac) = k[w], a[w]
    print(f"| {names[w]} | {fmt(km)} | {fmt(am)} | {am/km:.1f}× | {fmt(kc)} | {fmt(ac)} | {kkb/1024:.0f} | {akb/1024:.0f} |")
EOF
}

what=${1:-all}
case $what in
all | kdeploy | ansible) prepare && setup_work ;;
esac
case $what in
all)
	locked kdeploy
	locked ansible
	report
	;;
kdeploy | ansible) locked "$what" ;;
report) report ;;
*) die "usage: bench/day2.sh [all|kdeploy|ansible|report]" ;;
esac
