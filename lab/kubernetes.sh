# shellcheck shell=bash
# kubernetes.sh - sourced by lab.sh: what makes a lab node able to run the kubelet, the
# control plane and containers with limits (`lab.sh up --k8s`), and the lab's image registry.
#
# - cgroups: the host mounts the cgroup v1 controllers (its v2 tree holds none of cpu or
#   memory), so each node gets its own writable subtree of every v1 controller, bound into
#   the node at /run/hostcg/<controller> and mounted over /sys/fs/cgroup/<controller> inside
#   by a unit that runs before anything else (nspawn covers a bind placed directly there
#   with its own read-only mounts). The kubelet and containerd then use the cgroupfs driver.
# - A default route to $SINK_GATEWAY, an address nobody holds (see below).
# - /dev/kmsg: the kubelet's OOM watcher reads it; bound read-only from the host, with
#   CAP_SYSLOG to read it.
# - Kernel settings: a node's /proc/sys is writable (SYSTEMD_NSPAWN_API_VFS_WRITABLE=1),
#   as on a machine, so kdeploy's preinstall applies its sysctl file with systemd-sysctl
#   (whose unit is skipped when /proc/sys is read-only). The keys that are not namespaced
#   are the HOST's: `up --k8s` records the host's values of every such key kdeploy sets,
#   sets the three the kubelet checks, and `down` puts the recorded ones back.
# - The registry: Debian's docker-registry (distribution) on the bridge at
#   $HOST_ADDR:$REGISTRY_PORT, storage kept in the image cache, started by `up --k8s` and
#   stopped by `down`. lab/images.sh pushes the lab's images into it.

V1_CONTROLLERS=(cpu cpuacct cpuset memory pids devices freezer blkio)
K8S_SYSCTLS=(vm.overcommit_memory=1 kernel.panic=10 kernel.panic_on_oops=1)
# What else kdeploy's preinstall phase sets that is not namespaced: a node writes the
# host's value (its /proc/sys is writable in this mode), so down restores these too.
HOST_GLOBAL_SYSCTLS=(kernel.keys.root_maxbytes kernel.keys.root_maxkeys vm.panic_on_oom
	fs.inotify.max_user_instances)
REGISTRY_PORT=5000
# The nodes' default gateway in this mode: an address of the bridge that nothing holds.
# Kubernetes needs a route for Service addresses (a connect() to a ClusterIP is routed
# before kube-proxy's DNAT rewrites it); with no default route it fails at once. Through
# this gateway nothing can leave the bridge: whatever is not DNATed waits for an ARP
# answer that never comes.
SINK_GATEWAY=$NET_PREFIX.254
REGISTRY_ADDR=$HOST_ADDR:$REGISTRY_PORT

# k8s_node_cgroups I: node I's subtree of every v1 controller (created, cpuset filled);
# sets K8S_NSPAWN_ARGS (binds) and K8S_CGROUPS (the directories, to move nspawn into).
k8s_node_cgroups() {
	local name c top d
	name=$(node_name "$1")
	# CAP_SYSLOG: reading /dev/kmsg (kernel.dmesg_restrict); CAP_SYS_RESOURCE: the negative
	# oom_score_adj the kubelet and containerd give themselves.
	# shellcheck disable=SC2054  # one --capability with a comma-separated list
	K8S_NSPAWN_ARGS=(--bind-ro=/dev/kmsg --capability=CAP_SYSLOG,CAP_SYS_RESOURCE)
	K8S_CGROUPS=()
	for c in "${V1_CONTROLLERS[@]}"; do
		[[ -f /sys/fs/cgroup/$c/cgroup.procs ]] ||
			die "up --k8s: the host has no cgroup v1 '$c' controller at /sys/fs/cgroup/$c"
		top=/sys/fs/cgroup/$c/$LAB_CGROUP
		d=$top/$name
		mkdir -p "$d"
		if [[ $c == cpuset ]]; then
			# A new cpuset has no CPUs or memory nodes until given its parent's.
			local dir
			for dir in "$top" "$d"; do
				[[ -n $(cat "$dir/cpuset.cpus") ]] || cat "${dir%/*}/cpuset.cpus" >"$dir/cpuset.cpus"
				[[ -n $(cat "$dir/cpuset.mems") ]] || cat "${dir%/*}/cpuset.mems" >"$dir/cpuset.mems"
			done
		fi
		K8S_NSPAWN_ARGS+=(--bind="$d:/run/hostcg/$c")
		K8S_CGROUPS+=("$d")
	done
}

# k8s_prepare_root ROOT: the unit that mounts the node's own controllers at boot.
k8s_prepare_root() {
	local r=$1 unit=kdeploy-lab-cgroups.service
	cat >"$r/etc/systemd/system/$unit" <<'EOF'
# kdeploy lab (lab/kubernetes.sh): this node's own cgroup v1 controllers, bound from the
# host at /run/hostcg, mounted where the kubelet and containerd look for them.
[Unit]
Description=kdeploy lab: mount this node's cgroup v1 controllers
DefaultDependencies=no
After=local-fs.target
Before=sysinit.target containerd.service kubelet.service

[Service]
Type=oneshot
RemainAfterExit=yes
ExecStart=/bin/sh -c 'for c in /run/hostcg/*; do mkdir -p "/sys/fs/cgroup/$${c##*/}" 2>/dev/null; mount --bind "$c" "/sys/fs/cgroup/$${c##*/}" || exit 1; done'

[Install]
WantedBy=sysinit.target
EOF
	mkdir -p "$r/etc/systemd/system/sysinit.target.wants"
	ln -sf "../$unit" "$r/etc/systemd/system/sysinit.target.wants/$unit"
}

# The v1 controllers' lab subtrees, for cgroups_down.
k8s_cgroup_tops() {
	local c
	for c in "${V1_CONTROLLERS[@]}"; do
		[[ -d /sys/fs/cgroup/$c/$LAB_CGROUP ]] && printf '%s\n' "/sys/fs/cgroup/$c"
	done
	return 0
}

# k8s_node_route NETNS: the default route through the sink gateway.
k8s_node_route() {
	ip -n "$1" route replace default via "$SINK_GATEWAY" dev eth0
}

# Host kernel settings: record once (the first up --k8s), then set.
k8s_sysctls_up() {
	local f=$STATE_DIR/host-sysctl.orig kv k v
	if [[ ! -f $f ]]; then
		for k in "${K8S_SYSCTLS[@]%%=*}" "${HOST_GLOBAL_SYSCTLS[@]}"; do
			printf '%s=%s\n' "$k" "$(sysctl -n "$k")"
		done >"$f.new" && mv -f "$f.new" "$f"
	fi
	for kv in "${K8S_SYSCTLS[@]}"; do
		k=${kv%%=*}
		v=${kv#*=}
		if [[ $(sysctl -n "$k") != "$v" ]]; then
			log "host kernel setting for the kubelet: $k=$v (was $(sysctl -n "$k"); restored by down)"
			sysctl -q -w "$k=$v"
		fi
	done
}

# Put back what k8s_sysctls_up recorded.
k8s_sysctls_down() {
	local f=$STATE_DIR/host-sysctl.orig kv
	[[ -f $f ]] || return 0
	while read -r kv; do
		[[ -n $kv ]] || continue
		sysctl -q -w "$kv" || log "could not restore host kernel setting $kv"
	done <"$f"
	log "host kernel settings restored: $(tr '\n' ' ' <"$f")"
	rm -f -- "$f"
}

registry_pid() {
	local f=$STATE_DIR/run/registry.pid pid
	[[ -f $f ]] || return 1
	pid=$(cat "$f")
	[[ $pid =~ ^[0-9]+$ ]] && pid_alive "$pid" && grep -q docker-registry "/proc/$pid/cmdline" 2>/dev/null &&
		printf '%s' "$pid"
}

# Start the registry on the bridge (idempotent); wait until it answers.
registry_up() {
	command -v docker-registry >/dev/null || die "up --k8s: docker-registry is not installed (lab/lab.sh deps --k8s)"
	registry_pid >/dev/null && return 0
	local store=$CACHE_DIR/registry cfg=$STATE_DIR/registry.yml tries=0
	mkdir -p "$store"
	cat >"$cfg" <<EOF
version: 0.1
log:
  level: warn
storage:
  filesystem:
    rootdirectory: $store
  delete:
    enabled: true
http:
  addr: $REGISTRY_ADDR
EOF
	setsid docker-registry serve "$cfg" </dev/null >"$STATE_DIR/logs/registry.log" 2>&1 9>&- 8>&- &
	printf '%s\n' "$!" >"$STATE_DIR/run/registry.pid"
	until curl -fsS "http://$REGISTRY_ADDR/v2/" >/dev/null 2>&1; do
		((tries++ < 100)) || die "the registry did not answer on $REGISTRY_ADDR (see $STATE_DIR/logs/registry.log)"
		sleep 0.1
	done
	log "registry answering at http://$REGISTRY_ADDR (storage $store)"
}

registry_down() {
	local pid
	pid=$(registry_pid) || {
		rm -f -- "$STATE_DIR/run/registry.pid"
		return 0
	}
	kill -TERM "$pid" 2>/dev/null || true
	wait_gone 10 "$pid" || kill -KILL "$pid" 2>/dev/null || true
	rm -f -- "$STATE_DIR/run/registry.pid"
}
