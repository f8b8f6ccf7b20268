#!/usr/bin/env bash
# The first converge's transfer against OpenSSH's, on the 3-node etcd lab
# (tests/clusters/lab-etcd.nix), in one run:
#   1. builds kdeploy (PROFILE), boots a fresh 3-node lab;
#   2. RUNS times, alternating: `kdeploy reset` then a first converge (the recap's transfer
#      time: from the first push until the last node holds its blobs, sha256 checked on
#      the node; its total time, the slowest node's staging and the time of each phase),
#      then OpenSSH's floor for the
#      same bytes: each node gets as many bytes as kdeploy pushed to it (its blob bytes,
#      uncompressed) with `ssh NODE 'cat > FILE'`, one connection per node, all at once;
#   3. writes bench/results/<date>-<commit>/transfer.md (medians, the ratio, every run in
#      transfer.tsv beside it) and takes the lab down.
# Every converge is checked: the recap must say `changed` for the three nodes.
#
# Usage: bench/transfer.sh     Env: RUNS=5, PROFILE=release (ci: the tests' build, no LTO),
#   SMALL=N: N more small files on every node (custom.files, 1.4 KB each, in preinstall):
#   many small blobs beside the binaries (OpenSSH's floor gets their bytes too)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
RUNS=${RUNS:-5}
source "$ROOT/bench/lab-bench.sh"
command -v jq >/dev/null || die "jq missing"

lab_bench_setup transfer
SMALL=${SMALL:-0}
[[ $SMALL =~ ^[0-9]+$ ]] || die "SMALL must be a number of files"
if ((SMALL > 0)); then
	files="builtins.listToAttrs (builtins.genList (i: { name = \"/etc/kdeploy-bench/small-\${toString i}.conf\";"
	files+=" value = { phase = \"preinstall\"; text = builtins.concatStringsSep \"\" (builtins.genList"
	files+=" (l: \"line \${toString l} of small file \${toString i}\\n\") 40); }; }) $SMALL)"
	sed -i "0,/^  settings = {/s||  settings = {\n    custom.files = $files;|" "$WORK/lab.nix"
	grep -q 'custom.files' "$WORK/lab.nix" || die "could not add the small files to the lab's definition"
fi
ARGS=(--ssh-key "$ROOT/.lab/id_ed25519" --known-hosts "$ROOT/.lab/known_hosts")
SSH=(ssh -F "$ROOT/.lab/ssh_config")
NODES=(kdnode1 kdnode2 kdnode3)
NAME=transfer
((SMALL == 0)) || NAME=transfer-small$SMALL
TSV=$RESULTS/$NAME.tsv

# openssh_floor BYTES: seconds for every node to get BYTES with `cat > FILE`, all at once.
openssh_floor() {
	local s e n
	head -c "$1" /dev/urandom >"$WORK/bytes"
	s=$(now_ns)
	for n in "${NODES[@]}"; do "${SSH[@]}" "$n" 'cat > /var/tmp/openssh-floor' <"$WORK/bytes" & done
	wait
	e=$(now_ns)
	for n in "${NODES[@]}"; do "${SSH[@]}" "$n" 'rm -f /var/tmp/openssh-floor'; done
	awk -v d=$((e - s)) 'BEGIN { printf "%.3f", d / 1e9 }'
}

kdeploy_half() {
	"$ROOT"/lab/lab.sh down >/dev/null 2>&1 || true
	"$ROOT"/lab/lab.sh up 3 >/dev/null
	printf 'run\tkdeploy_transfer_s\topenssh_s\tper_node_bytes\tfirst_converge_s\tpreinstall_s\tcontainer_runtime_s\tetcd_s\tstaging_s\n' >"$TSV"
	local i t0 t1 json bytes floor
	for ((i = 1; i <= RUNS; i++)); do
		"$KD" reset "$WORK/lab.nix" --yes "${ARGS[@]}" >/dev/null 2>&1 || true
		t0=$(now_ns)
		"$KD" switch "$WORK/lab.nix" "${ARGS[@]}" --output json >"$WORK/first.json" 2>"$WORK/first.err" ||
			die "first converge $i failed: $(tail -n 5 "$WORK/first.err")"
		t1=$(now_ns)
		json=$WORK/first.json
		[[ $(jq -r '[.nodes[].status] | unique | join(" ")' "$json") == changed ]] || die "run $i: not three changed nodes"
		# what each node was sent, uncompressed: the same for the three (the largest share)
		bytes=$(jq -r '.transfer.sshBytes / 3 | floor' "$json")
		floor=$(openssh_floor "$bytes")
		printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$i" "$(jq -r '.transfer.tookSecs' "$json")" "$floor" "$bytes" \
			"$(awk -v d=$((t1 - t0)) 'BEGIN { printf "%.3f", d / 1e9 }')" \
			"$(jq -r '.phases.preinstall' "$json")" "$(jq -r '.phases["container-runtime"]' "$json")" \
			"$(jq -r '.phases.etcd' "$json")" \
			"$(sed -n 's/^\[.*\] staged .* in \([0-9.]*\) s$/\1/p' "$WORK/first.err" | sort -n | tail -n 1)" >>"$TSV"
		log "run $i: $(tail -n 1 "$TSV")"
	done
	"$ROOT"/lab/lab.sh down >/dev/null 2>&1 || true
}
locked kdeploy

median() { awk -F'\t' -v c="$1" 'NR > 1 { print $c }' "$TSV" | sort -n | awk '{ a[NR] = $1 } END { printf "%.2f", (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
k=$(median 2) o=$(median 3)
{
	echo "# First converge's transfer against OpenSSH, 3-node etcd lab ($(git rev-parse --short HEAD), $(date -u +%Y-%m-%d), RUNS=$RUNS, profile $PROFILE, SMALL=$SMALL)"
	echo
	echo "| measure | median |"
	echo "|---|---|"
	echo "| kdeploy: transfer (the recap's, push start to the last node holding its blobs, sha256 checked) | $k s |"
	echo "| OpenSSH: \`cat > FILE\`, the same bytes uncompressed, one connection per node, all at once | $o s |"
	echo "| kdeploy against OpenSSH (OpenSSH's time / kdeploy's) | $(awk -v k="$k" -v o="$o" 'BEGIN { printf "%.0f%%", 100 * o / k }') |"
	echo "| kdeploy: first converge, whole | $(median 5) s |"
	echo "| of it: staging (slowest node), preinstall / container-runtime / etcd phases | $(median 9); $(median 6) / $(median 7) / $(median 8) s |"
	echo
	echo "Every run: \`$NAME.tsv\`."
} >"$RESULTS/$NAME.md"
cat "$RESULTS/$NAME.md"
