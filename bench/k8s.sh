#!/usr/bin/env bash
# Real-Kubernetes benchmark: clusters/lab.nix (1 control plane, 2 workers, 3 etcd members
# with TLS, flannel, CoreDNS; Kubernetes built from its Go modules, images from the lab
# registry) on freshly booted nodes kdnode6-8 of a Kubernetes-capable lab, timed step by
# step with kdeploy:
#   converge  bare nodes -> every node Ready (the switch, then `kubectl wait` for Ready)
#   noop      the same switch again (every node unchanged)
#   add       k8s-worker03 (kdnode5) added -> Ready
#   prune     k8s-worker03 removed with --prune (drained, deleted, reset)
#   upgrade   Kubernetes 1.34.4 -> 1.35.4 (kubeadm upgrade, every node drained in turn)
#   reset     every node back to how the lab booted it
# and checked (versions, Ready nodes, unchanged statuses). The peer column is the
# seed's Kubespray figures (first run 341 s, re-run 183 s, reset 78 s): Kubespray
# cannot be run here (its playbooks download from the internet).
# The one-time builds (lab/build-k8s.sh) are not counted; they must be there.
#
# Writes bench/results/<date>-<commit>/k8s.md (the table), k8s.tsv (raw numbers) and
# k8s-logs/ (each step's output).
#
# Usage: bench/k8s.sh      (needs `lab/lab.sh up 8 --k8s`; takes the lab lock)
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$PWD
LOCK=/tmp/kdeploy-lab.lock
LOCK_WAIT=${LOCK_WAIT:-1800}
source "$ROOT/bench/results-dir.sh"
source "$ROOT/bench/common.sh"
BIN=/var/cache/kdeploy-lab/bin
KUBECTL="KUBECONFIG=/etc/kubernetes/admin.conf kubectl"

grep -qx 'K8S=1' "${KDEPLOY_LAB_DIR:-.lab}/lab.env" 2>/dev/null && grep -qx 'N=8' "${KDEPLOY_LAB_DIR:-.lab}/lab.env" ||
	die "needs a Kubernetes-capable lab of 8 nodes: lab/lab.sh up 8 --k8s"
for v in 1.34.4 1.35.4; do
	[[ -f $BIN/kubernetes-$v/done ]] || die "Kubernetes $v is not built: KDEPLOY_K8S_VERSION=$v lab/build-k8s.sh kubernetes"
	KDEPLOY_K8S_VERSION=$v lab/images.sh push 10.77.0.1:5000 >/dev/null 2>&1 || die "lab/images.sh push ($v) failed"
done
log "building kdeploy (cargo build --profile ci)"
cargo build --profile ci --quiet --bin kdeploy

WORK=$(mktemp -d /tmp/kdeploy-k8s-bench.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
KD=$ROOT/target/ci/kdeploy
sed 's/\.11"/.16"/; s/\.12"/.17"/; s/\.13"/.18"/' clusters/lab.nix >"$WORK/lab3.nix"
sed 's|^  };$|&|; /k8s-worker02 = {/a\    k8s-worker03 = { address = "10.77.0.15"; roles = [ "worker" ]; };' "$WORK/lab3.nix" >"$WORK/lab4.nix"
sed 's/kubernetes-1\.34\.4/kubernetes-1.35.4/; s/version = "1\.34\.4"/version = "1.35.4"/; s/settings = {/&\n    kubelet.failCgroupV1 = false;/' \
	"$WORK/lab3.nix" >"$WORK/up.nix"
grep -q k8s-worker03 "$WORK/lab4.nix" && grep -q '"1.35.4"' "$WORK/up.nix" || die "could not derive the cluster files"

# kd SUB FILE ARGS...: kdeploy from an empty environment with the lab's key and host
# keys (a script, not a function: /usr/bin/time runs it)
cat >"$WORK/kd" <<SCRIPT
#!/bin/sh
sub=\$1 file=\$2
shift 2
exec env -i PATH="$PATH" KDEPLOY_ALLOW_LOCAL="$BIN" "$KD" "\$sub" "\$file" \\
	--ssh-key "$ROOT/.lab/id_ed25519" --known-hosts "$ROOT/.lab/known_hosts" --output json "\$@"
SCRIPT
chmod +x "$WORK/kd"
on6() { "$ROOT"/lab/lab.sh exec 6 "$KUBECTL $*"; }
TSV=$RESULTS/k8s.tsv
mkdir -p "$RESULTS/k8s-logs"
: >"$TSV"

step() { # step NAME SUB FILE ARGS...: time one kdeploy command, keep its output
	local name=$1
	shift
	log "$name"
	timed "$WORK/$name" "$WORK/kd" "$@" || { cat "$WORK/$name.stderr" >&2; die "$name failed"; }
	cp "$WORK/$name.stdout" "$RESULTS/k8s-logs/$name.json"
	cp "$WORK/$name.stderr" "$RESULTS/k8s-logs/$name.log"
	record "$TSV" "$name" 1
}
statuses() { python3 -c 'import json,sys; print(" ".join(sorted(set(n["status"] for n in json.load(sys.stdin)["nodes"].values()))))' <"$WORK/$1.stdout"; }
ready_within() { # ready_within NAME: how long after the switch every node was Ready (ms)
	local t0
	t0=$(now_ns)
	on6 wait --for=condition=Ready node --all --timeout=300s >/dev/null || die "$1: nodes not Ready"
	echo $((($(now_ns) - t0) / 1000000))
}

k8s_half() {
	"$ROOT"/lab/lab.sh reboot 5 6 7 8 >/dev/null
	step converge switch "$WORK/lab3.nix" --allow-local "$BIN"
	local ready
	ready=$(ready_within converge)
	T_MS=$((T_MS + ready))
	printf 'converge+ready\t1\t%s\t\t\n' "$T_MS" >>"$TSV"
	step noop switch "$WORK/lab3.nix" --allow-local "$BIN"
	[[ $(statuses noop) == unchanged ]] || die "the re-run was not a no-op: $(statuses noop)"
	step add switch "$WORK/lab4.nix" --allow-local "$BIN"
	on6 wait --for=condition=Ready node/k8s-worker03 --timeout=300s >/dev/null || die "the new worker is not Ready"
	step prune switch "$WORK/lab3.nix" --allow-local "$BIN" --prune
	! on6 get node k8s-worker03 >/dev/null 2>&1 || die "the pruned worker is still a node"
	step upgrade switch "$WORK/up.nix" --allow-local "$BIN"
	# (a restarted kubelet reports its version with its next status update)
	local i
	for ((i = 0; i < 30; i++)); do
		[[ $(on6 get nodes -o 'jsonpath={.items[*].status.nodeInfo.kubeletVersion}') == "v1.35.4 v1.35.4 v1.35.4" ]] && break
		sleep 2
	done
	((i < 30)) || die "not every kubelet runs v1.35.4 after the upgrade"
	step reset reset "$WORK/up.nix" --yes
	"$ROOT"/lab/lab.sh reboot 5 6 7 8 >/dev/null
}

exec 7>"$LOCK"
log "waiting for the lab lock ($LOCK)"
flock -w "$LOCK_WAIT" 7 || die "lab lock not acquired within ${LOCK_WAIT}s"
k8s_half
flock -u 7

ms() { awk -F'\t' -v w="$1" '$1 == w { printf "%.1f s", $3 / 1000 }' "$TSV"; }
{
	echo "| step | kdeploy | Kubespray (the seed's figures) |"
	echo "|---|---|---|"
	echo "| first converge, bare nodes to every node Ready | $(ms converge+ready) (the switch: $(ms converge)) | 341 s |"
	echo "| no-op re-run | $(ms noop) | 183 s |"
	echo "| add a worker (to Ready) | $(ms add) | |"
	echo "| remove it (--prune: drain, delete, reset) | $(ms prune) | |"
	echo "| upgrade 1.34.4 -> 1.35.4, every node drained in turn | $(ms upgrade) | |"
	echo "| reset of the three nodes | $(ms reset) | 78 s |"
	echo
	echo "load average at the end: $(loadavg); commit $(git rev-parse --short HEAD)"
} | tee "$RESULTS/k8s.md"
