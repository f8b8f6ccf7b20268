#!/usr/bin/env bash
# lab.sh - boot N real local test nodes for kdeploy and remove them cleanly.
#
# A node is a systemd-nspawn container booting Debian (systemd as PID 1, real sshd) from its
# own copy (on a tmpfs) of a cached debootstrap image, in its own network namespace on a host
# bridge.
# See lab/README.md and `lab/lab.sh --help`.
set -euo pipefail

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$SCRIPT_DIR/.." && pwd)

STATE_DIR=${KDEPLOY_LAB_DIR:-$REPO/.lab}
CACHE_DIR=${KDEPLOY_LAB_CACHE:-/var/cache/kdeploy-lab}
RUN_DIR=${KDEPLOY_LAB_RUN_DIR:-/run/kdeploy-lab}
USE_TMPFS=${KDEPLOY_LAB_TMPFS:-1}
BOOT_TIMEOUT=${KDEPLOY_LAB_BOOT_TIMEOUT:-60}
STOP_TIMEOUT=${KDEPLOY_LAB_STOP_TIMEOUT:-20}
WANT_PYTHON=${KDEPLOY_LAB_PYTHON:-0}
KEEP_ON_FAIL=${KDEPLOY_LAB_KEEP_ON_FAIL:-0}
CGROUP_V2=${KDEPLOY_LAB_CGROUP_V2:-1}
RUN_CONTAINERS=${KDEPLOY_LAB_CONTAINERS:-1}

BRIDGE=kdbr0
NET_PREFIX=10.77.0
HOST_ADDR=$NET_PREFIX.1
CACHE_NETNS=kdcache
CACHE_VETH=kdvcache
CACHE_ADDR=$NET_PREFIX.250
MAX_NODES=50
GUARD_METRIC=4242
WANT_K8S=${KDEPLOY_LAB_K8S:-0}
# Kubernetes-capable nodes and the registry (up --k8s).
# shellcheck source=lab/kubernetes.sh
. "$SCRIPT_DIR/kubernetes.sh"

# Bump when the image recipe below changes: cached images with another recipe are rebuilt.
IMAGE_RECIPE=7
# curl: what a node fetches binary-cache blobs with (Kubespray's nodes have it too);
# zstd: what it decompresses blobs sent compressed with (without it, they come as they are);
# openssl: what it checks the sha256 of received blobs with (SHA-NI; without it, coreutils'
# sha256sum, a quarter the speed) -- Kubespray needs it on its nodes too (its etcd certificates)
BASE_PACKAGES=systemd,systemd-sysv,openssh-server,iproute2,dbus,procps,sudo,curl,zstd,openssl,libnss-myhostname
# The packages `lab.sh deps` installs on the host.
HOST_PACKAGES=(systemd-container debootstrap debian-archive-keyring openssh-client iproute2 util-linux)
# ... and for up --k8s: the registry, the image tools (lab/images.sh) and what the images
# are made of (iptables and conntrack for kube-proxy and flannel, busybox, nginx's stream module).
K8S_HOST_PACKAGES=(docker-registry umoci skopeo curl iptables conntrack busybox-static nginx-light libnginx-mod-stream)

usage() {
	cat <<EOF
Usage: lab/lab.sh COMMAND [ARGS]

Boots real local test nodes for kdeploy: each node is a systemd-nspawn container booting
Debian (systemd as PID 1, real sshd) in its own network namespace, attached to a host bridge.
Must run as root. Never routes traffic beyond 10.77.0.0/24.

Commands:
  up [N] [--python] [--k8s]
                      Boot nodes kdnode1..kdnodeN (default N=3) at 10.77.0.11, .12, ...
                      on bridge $BRIDGE ($HOST_ADDR/24 on the host), netns kdn<i>, veth kdv<i>.
                      Builds the base image first if it is not cached. Waits (at most
                      ${BOOT_TIMEOUT}s) until every node answers SSH, then prints a summary.
                      If the same lab is already up it says so and exits 0; a partial or
                      different lab is torn down and re-created.
                      --python (or KDEPLOY_LAB_PYTHON=1) boots from an image that also
                      has python3 (for Ansible comparisons).
                      --k8s (or KDEPLOY_LAB_K8S=1): nodes that can run the kubelet and
                      the control plane (each node's own cgroup v1 controllers, /dev/kmsg),
                      the host kernel settings the kubelet checks (vm.overcommit_memory=1,
                      kernel.panic=10, kernel.panic_on_oops=1; the host's values are
                      recorded and put back by 'down'), and the image registry at
                      $HOST_ADDR:5000 (lab/images.sh push fills it). See lab/kubernetes.sh.
  down [--purge]      Stop all nodes, wait for them to exit, then delete veths, namespaces,
                      the bridge and the nodes' root trees. Succeeds when the lab is partly
                      up or already down. 'up' also adds an "unreachable" route for
                      10.77.0.0/24 (metric $GUARD_METRIC) so that nothing sent to a lab
                      address while the lab is down leaves the host; 'down' keeps it,
                      'down --purge' removes it too.
  reboot I...         Power nodes off and boot them again from a fresh root tree (as
                      'up' does), with the lab's current settings; waits for SSH.
  status              Show each node: process running? SSH answering? Exit 0 only if all
                      nodes of the lab are running and answering.
  ssh I [CMD...]      ssh into node I (root) with the lab key and known_hosts.
  exec I CMD...       run CMD (sh) as root inside node I without SSH (nsenter): how the
                      tests look at a node, even one whose sshd refuses root
  rekey I [--update-known-hosts]
                      Give node I a NEW SSH host key and restart its sshd (the node keeps
                      running). known_hosts is left stale unless --update-known-hosts, so a
                      client using it must now refuse the node (changed host key).
  known-hosts         Rewrite known_hosts from the nodes' current host keys.
  cache up|down       Add (or remove) namespace $CACHE_NETNS on the bridge at $CACHE_ADDR
                      for a binary-cache server (transfer.cache) that a test starts in it
                      with 'ip netns exec $CACHE_NETNS ...'; prints the address. 'down'
                      kills what runs there; 'lab.sh down' removes it too.
  env                 Print shell variables describing the lab (eval "\$(lab/lab.sh env)").
  image [--python]    Only build (or verify) the cached base image.
  deps [--k8s]        apt-get install the host packages the lab needs (--k8s: also those
                      of up --k8s and lab/images.sh).
  help, --help        This text.

Files (state dir: \$KDEPLOY_LAB_DIR, default <repo>/.lab):
  ssh_config          use with: ssh -F .lab/ssh_config kdnode1   (or 10.77.0.11)
                      (User root, lab IdentityFile, UserKnownHostsFile .lab/known_hosts,
                      StrictHostKeyChecking yes)
  known_hosts         "kdnode<i>,10.77.0.<10+i> ssh-ed25519 ..." per node (its own host key)
  id_ed25519[.pub]    client key, generated once; authorized for root on every node
  nodes               one "name address" line per node
  nodes/<name>/       the node's own SSH host key (copied into its /etc/ssh at each boot)
  logs/<name>.log     the node's console / systemd-nspawn output
  run/<name>.pid      pid of the node's systemd-nspawn process
Node root trees: \$KDEPLOY_LAB_RUN_DIR/<name> (default /run/kdeploy-lab, a tmpfs mounted by
'up' and unmounted by 'down'); the base image: \$KDEPLOY_LAB_CACHE/<suite>-minbase[-python].

Environment:
  KDEPLOY_LAB_DIR           state dir (default <repo>/.lab)
  KDEPLOY_LAB_CACHE         image cache (default /var/cache/kdeploy-lab)
  KDEPLOY_LAB_RUN_DIR       node root trees (default /run/kdeploy-lab)
  KDEPLOY_LAB_TMPFS=0       keep node root trees on disk instead of a tmpfs (slower copies)
  KDEPLOY_LAB_PYTHON=1      same as up --python
  KDEPLOY_LAB_K8S=1         same as up --k8s
  KDEPLOY_LAB_MIRROR        Debian mirror for debootstrap (default: the one apt uses here)
  KDEPLOY_LAB_SUITE         Debian suite (default: the host's codename, else bookworm)
  KDEPLOY_LAB_BOOT_TIMEOUT  seconds to wait for SSH on all nodes (default 60)
  KDEPLOY_LAB_STOP_TIMEOUT  seconds to wait for a clean node shutdown before SIGKILL (default 20)
  KDEPLOY_LAB_KEEP_ON_FAIL=1  leave a failed 'up' running for inspection (default: tear down)
  KDEPLOY_LAB_CGROUP_V2=0   don't force a cgroup v2 hierarchy inside nodes (default 1)
  KDEPLOY_LAB_CONTAINERS=0  don't grant what runc needs to start containers in a node
                            (keyctl, bpf, CAP_NET_ADMIN; default 1)
  KDEPLOY_LAB_NSPAWN_ARGS   extra systemd-nspawn arguments (word-split), e.g. --capability=all
EOF
}

log() { printf 'lab: %s\n' "$*" >&2; }
die() {
	printf 'lab: error: %s\n' "$*" >&2
	exit 1
}

now_ms() { date +%s%3N; }
elapsed() { # elapsed START_MS -> "12.3s"
	local d=$(($(now_ms) - $1))
	printf '%d.%ds' $((d / 1000)) $((d % 1000 / 100))
}

need_root() {
	[[ $EUID -eq 0 ]] || die "must run as root (network namespaces, bridge, systemd-nspawn)"
}

need_cmds() {
	local c missing=()
	for c in "$@"; do
		command -v "$c" >/dev/null 2>&1 || missing+=("$c")
	done
	if ((${#missing[@]})); then
		die "missing commands: ${missing[*]} (run: lab/lab.sh deps)"
	fi
}

node_name() { printf 'kdnode%d' "$1"; }
node_addr() { printf '%s.%d' "$NET_PREFIX" $((10 + $1)); }
node_netns() { printf 'kdn%d' "$1"; }
node_veth() { printf 'kdv%d' "$1"; }

check_index() {
	if [[ ! $1 =~ ^[1-9][0-9]*$ ]] || (($1 > MAX_NODES)); then
		die "bad node index '$1' (1..$MAX_NODES)"
	fi
}

# ---------------------------------------------------------------------------------------------
# State

init_state_dir() {
	mkdir -p "$STATE_DIR"
	STATE_DIR=$(cd "$STATE_DIR" && pwd)
	chmod 0700 "$STATE_DIR"
	mkdir -p "$STATE_DIR/run" "$STATE_DIR/logs" "$STATE_DIR/nodes"
}

lock_state() {
	# fd 9 must not leak into long-running children: every spawn below closes it (9>&-).
	exec 9>"$STATE_DIR/.lock"
	flock -w 300 9 || die "another lab.sh holds $STATE_DIR/.lock"
}

# Reads N and IMAGE of the lab recorded by the last 'up' (empty if none).
read_lab_env() {
	LAB_N=
	LAB_IMAGE=
	LAB_K8S=0
	local f=$STATE_DIR/lab.env k v
	[[ -f $f ]] || return 0
	while IFS='=' read -r k v; do
		case $k in
		N) LAB_N=$v ;;
		IMAGE) LAB_IMAGE=$v ;;
		K8S) LAB_K8S=$v ;;
		esac
	done <"$f"
}

image_name() {
	if [[ $WANT_PYTHON == 1 ]]; then
		printf '%s-minbase-python' "$(debian_suite)"
	else
		printf '%s-minbase' "$(debian_suite)"
	fi
}

debian_suite() {
	if [[ -n ${KDEPLOY_LAB_SUITE:-} ]]; then
		printf '%s' "$KDEPLOY_LAB_SUITE"
		return
	fi
	local codename=
	if [[ -r /etc/os-release ]]; then
		codename=$(sed -n 's/^VERSION_CODENAME=//p' /etc/os-release | tr -d '"')
	fi
	printf '%s' "${codename:-bookworm}"
}

# ---------------------------------------------------------------------------------------------
# Base image

# The Debian mirror apt uses on this host (only package registries are reachable).
detect_mirror() {
	if [[ -n ${KDEPLOY_LAB_MIRROR:-} ]]; then
		printf '%s' "$KDEPLOY_LAB_MIRROR"
		return
	fi
	local suite f uri=
	suite=$(debian_suite)
	# deb822 .sources files
	for f in /etc/apt/sources.list.d/*.sources; do
		[[ -r $f ]] || continue
		uri=$(awk -v suite="$suite" '
			BEGIN { RS = ""; FS = "\n" }
			{
				types = uris = suites = comps = ""; enabled = "yes"
				for (i = 1; i <= NF; i++) {
					line = $i
					if (line ~ /^[ \t]*#/) continue
					p = index(line, ":"); if (p == 0) continue
					k = tolower(substr(line, 1, p - 1)); v = substr(line, p + 1)
					gsub(/^[ \t]+|[ \t]+$/, "", v)
					if (k == "types") types = v
					else if (k == "uris") uris = v
					else if (k == "suites") suites = v
					else if (k == "components") comps = v
					else if (k == "enabled") enabled = tolower(v)
				}
				if (enabled == "no") next
				if ((" " types " ") !~ / deb /) next
				if ((" " suites " ") !~ (" " suite " ")) next
				if ((" " comps " ") !~ / main /) next
				split(uris, u, /[ \t]+/)
				if (u[1] ~ /^(https?|file):/) { print u[1]; exit }
			}' "$f")
		if [[ -n $uri ]]; then
			printf '%s' "$uri"
			return
		fi
	done
	# one-line format
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[[ -r $f ]] || continue
		uri=$(awk -v suite="$suite" '
			$1 == "deb" {
				i = 2
				if ($i ~ /^\[/) { while (i <= NF && $i !~ /\]$/) i++; i++ }
				if ($(i + 1) != suite) next
				for (j = i + 2; j <= NF; j++) if ($j == "main" && $i ~ /^(https?|file):/) { print $i; exit }
			}' "$f")
		if [[ -n $uri ]]; then
			printf '%s' "$uri"
			return
		fi
	done
	printf 'http://deb.debian.org/debian'
}

image_packages() {
	local p=$BASE_PACKAGES
	# python3, not python3-minimal: Ansible's modules need the standard library (shutil, json).
	[[ $WANT_PYTHON == 1 ]] && p+=,python3
	printf '%s' "$p"
}

# Contents of the marker written last into the cache; an image whose marker differs is rebuilt.
image_marker_text() {
	printf 'recipe=%s\nsuite=%s\npackages=%s\n' "$IMAGE_RECIPE" "$(debian_suite)" "$(image_packages)"
}

image_dir() { printf '%s/%s' "$CACHE_DIR" "$(image_name)"; }

image_ok() {
	local dir marker
	dir=$(image_dir)
	marker=$dir.complete
	[[ -d $dir && -f $marker ]] && [[ $(<"$marker") == "$(image_marker_text)" ]]
}

# Removes a directory tree without crossing into mounts (an interrupted debootstrap may have
# left /proc or /sys mounted inside it).
remove_tree() {
	local d=$1
	[[ -n $d && $d != / && -e $d ]] || return 0
	local m
	# unmount anything still mounted below it, deepest first
	while read -r m; do
		umount -l "$m" 2>/dev/null || true
	done < <(awk -v p="$d/" 'index($2, p) == 1 { print $2 }' /proc/mounts | sort -r)
	rm -rf --one-file-system -- "$d"
}

ensure_image() {
	if image_ok; then
		return 0
	fi
	need_cmds debootstrap
	mkdir -p "$CACHE_DIR/debs"
	exec 8>"$CACHE_DIR/.lock"
	flock -w 900 8 || die "another lab.sh is building an image in $CACHE_DIR"
	if image_ok; then # built by someone else while we waited
		exec 8>&-
		return 0
	fi
	local dir suite mirror tmp start
	dir=$(image_dir)
	suite=$(debian_suite)
	mirror=$(detect_mirror)
	tmp=$dir.build
	start=$(now_ms)
	log "building image $(image_name) (debootstrap --variant=minbase $suite from $mirror) ..."
	rm -f -- "$dir.complete"
	remove_tree "$tmp"
	remove_tree "$dir"
	if ! debootstrap --variant=minbase --cache-dir="$CACHE_DIR/debs" \
		--include="$(image_packages)" "$suite" "$tmp" "$mirror" \
		>"$CACHE_DIR/$(image_name).debootstrap.log" 2>&1; then
		tail -n 20 "$CACHE_DIR/$(image_name).debootstrap.log" >&2 || true
		remove_tree "$tmp"
		die "debootstrap failed (full log: $CACHE_DIR/$(image_name).debootstrap.log)"
	fi
	customize_image "$tmp"
	mv -- "$tmp" "$dir"
	image_marker_text >"$dir.complete"
	exec 8>&-
	log "image $(image_name) built in $(elapsed "$start") ($(du -sh "$dir" | cut -f1))"
}

customize_image() {
	local r=$1 u
	# No shared host keys in the image: each node's copy gets its own at 'up'.
	rm -f -- "$r"/etc/ssh/ssh_host_*
	# Only the ed25519 key exists on a node; without this, sshd logs errors for the others.
	cat >"$r/etc/ssh/sshd_config.d/kdeploy-lab.conf" <<EOF
# kdeploy lab node: the host key is generated per node on the lab host (lab/lab.sh).
HostKey /etc/ssh/ssh_host_ed25519_key
EOF
	# debootstrap copies the build host's /etc/hostname; each node's copy gets its own.
	rm -f -- "$r/etc/hostname"
	# Every possible lab node resolves by name on every node (like DNS in a real cluster).
	{
		printf '127.0.0.1\tlocalhost\n::1\t\tlocalhost ip6-localhost ip6-loopback\n'
		for ((u = 1; u <= MAX_NODES; u++)); do
			printf '%s\t%s\n' "$(node_addr "$u")" "$(node_name "$u")"
		done
	} >"$r/etc/hosts"
	# A node's own hostname resolves without /etc/hosts or DNS (libnss-myhostname), as on
	# a systemd distribution: kdeploy's preinstall rewrites /etc/hosts with the cluster's
	# names only, and sudo looks the hostname up on every call (with no answer, it waits
	# out the resolver: seconds per login as a sudo user).
	sed -i 's/^hosts:.*/hosts:          files myhostname dns/' "$r/etc/nsswitch.conf"
	mkdir -p "$r/root/.ssh"
	chmod 0700 "$r/root/.ssh"
	# pam_env complains on every login without it.
	[[ -e $r/etc/default/locale ]] || : >"$r/etc/default/locale"
	# No machine-id in the image: each node's copy gets its own at 'up'.
	: >"$r/etc/machine-id"
	rm -f -- "$r/var/lib/dbus/machine-id"
	ln -s /etc/machine-id "$r/var/lib/dbus/machine-id"
	# Nothing on a node should try to reach the outside (it has no route anyway), nor
	# change its files on a clock: dpkg-db-backup.timer writes /var/backups at midnight,
	# which a test comparing a reset node with its boot state (lab/node-tree.sh) then
	# finds, when the run spans midnight.
	for u in apt-daily.timer apt-daily-upgrade.timer e2scrub_all.timer fstrim.timer \
		dpkg-db-backup.timer systemd-timesyncd.service; do
		ln -sf /dev/null "$r/etc/systemd/system/$u"
	done
	# Keep the image (copied for every node) small: no docs, man pages, translations, caches.
	rm -rf -- "$r"/usr/share/doc/* "$r"/usr/share/man/* "$r"/usr/share/info/* \
		"$r"/usr/share/locale/* "$r"/var/cache/apt/*.bin "$r"/var/lib/apt/lists/* \
		"$r"/var/cache/apt/archives/*.deb "$r"/var/cache/debconf/*-old "$r"/var/log/*.log
}

# ---------------------------------------------------------------------------------------------
# Keys and SSH client files

ensure_client_key() {
	local k=$STATE_DIR/id_ed25519
	if [[ ! -f $k || ! -f $k.pub ]]; then
		rm -f -- "$k" "$k.pub"
		ssh-keygen -q -t ed25519 -N '' -C kdeploy-lab -f "$k"
	fi
}

# Generates (once) node I's own SSH host key, kept in the state dir across up/down.
ensure_node_keys() {
	local d
	d=$STATE_DIR/nodes/$(node_name "$1")
	mkdir -p "$d"
	chmod 0700 "$d"
	if [[ ! -f $d/ssh_host_ed25519_key || ! -f $d/ssh_host_ed25519_key.pub ]]; then
		new_host_key "$1"
	fi
}

# Makes a new host key for node I in the state dir (install_node_key puts it into the node).
new_host_key() {
	local name d tmp
	name=$(node_name "$1")
	d=$STATE_DIR/nodes/$name
	tmp=$d/.new_key
	rm -f -- "$tmp" "$tmp.pub"
	ssh-keygen -q -t ed25519 -N '' -C "root@$name" -f "$tmp"
	chmod 0600 "$tmp"
	chmod 0644 "$tmp.pub"
	mv -f -- "$tmp.pub" "$d/ssh_host_ed25519_key.pub"
	mv -f -- "$tmp" "$d/ssh_host_ed25519_key"
}

write_known_hosts() {
	local n=$1 i name tmp=$STATE_DIR/known_hosts.tmp
	: >"$tmp"
	for ((i = 1; i <= n; i++)); do
		name=$(node_name "$i")
		printf '%s,%s %s\n' "$name" "$(node_addr "$i")" \
			"$(cut -d' ' -f1,2 "$STATE_DIR/nodes/$name/ssh_host_ed25519_key.pub")" >>"$tmp"
	done
	mv -f -- "$tmp" "$STATE_DIR/known_hosts"
}

write_client_files() {
	local n=$1 i
	{
		printf '# Generated by lab/lab.sh: ssh -F %s kdnode1\n' "$STATE_DIR/ssh_config"
		for ((i = 1; i <= n; i++)); do
			printf 'Host %s\n  HostName %s\n' "$(node_name "$i")" "$(node_addr "$i")"
		done
		cat <<EOF
Host kdnode* $NET_PREFIX.*
  User root
  IdentityFile "$STATE_DIR/id_ed25519"
  IdentitiesOnly yes
  UserKnownHostsFile "$STATE_DIR/known_hosts"
  GlobalKnownHostsFile /dev/null
  StrictHostKeyChecking yes
  UpdateHostKeys no
  CheckHostIP no
  PasswordAuthentication no
  KbdInteractiveAuthentication no
  BatchMode yes
  ConnectTimeout 5
  LogLevel ERROR
EOF
	} >"$STATE_DIR/ssh_config"
	for ((i = 1; i <= n; i++)); do
		printf '%s %s\n' "$(node_name "$i")" "$(node_addr "$i")"
	done >"$STATE_DIR/nodes.txt"
	mv -f -- "$STATE_DIR/nodes.txt" "$STATE_DIR/nodes"
	write_known_hosts "$n"
}

lab_ssh() { # lab_ssh I [ssh args...]
	local i=$1
	shift
	ssh -F "$STATE_DIR/ssh_config" "$(node_name "$i")" "$@"
}

# ---------------------------------------------------------------------------------------------
# Processes

# Each node's systemd (PID 1 and its user managers) holds a few inotify instances, all
# counted against the host's root user: Debian's default of 128 stops the boot of the
# ~24th node ("Failed to create control group inotify object: Too many open files").
# Raise the limit (never lower it) to leave room for N nodes beside the host's own.
inotify_room() {
	local want=$((256 + 16 * $1)) have
	have=$(cat /proc/sys/fs/inotify/max_user_instances)
	((have >= want)) && return 0
	log "raising fs.inotify.max_user_instances from $have to $want for $1 nodes"
	echo "$want" >/proc/sys/fs/inotify/max_user_instances
}

# Is PID a live (not zombie) systemd-nspawn process for node NAME?
is_node_nspawn() {
	local pid=$1 name=$2 state
	[[ $pid =~ ^[0-9]+$ && -r /proc/$pid/cmdline ]] || return 1
	state=$(awk '{ print $3 }' "/proc/$pid/stat" 2>/dev/null) || return 1
	[[ $state != Z && $state != X ]] || return 1
	local args
	args=$({ tr '\0' '\n' <"/proc/$pid/cmdline"; } 2>/dev/null) || return 1
	[[ ${args%%$'\n'*} == *systemd-nspawn ]] || return 1
	grep -qx -- "--machine=$name" <<<"$args"
}

node_pid() { # prints the node's nspawn pid if it is running
	local name pid
	name=$(node_name "$1")
	pid=$(cat "$STATE_DIR/run/$name.pid" 2>/dev/null) || return 1
	is_node_nspawn "$pid" "$name" && printf '%s' "$pid"
}

# Every live systemd-nspawn process started by this tool (any node index), as "pid name".
all_node_nspawns() {
	local f pid name
	# One grep over all command lines finds the candidates (it also matches itself: the
	# systemd-nspawn check below drops that).
	while IFS= read -r f; do
		pid=${f#/proc/}
		pid=${pid%/cmdline}
		name=$({ tr '\0' '\n' <"$f"; } 2>/dev/null | sed -n 's/^--machine=\(kdnode[0-9]\+\)$/\1/p' | head -n 1) || true
		[[ -n $name ]] || continue
		is_node_nspawn "$pid" "$name" && printf '%s %s\n' "$pid" "$name"
	done < <(grep -l -a -e '--machine=kdnode' /proc/[0-9]*/cmdline 2>/dev/null || true)
	return 0
}

# The container's init (PID 1 inside), i.e. the child of the nspawn process.
node_leader() {
	local pid=$1 c
	read -r c _ < <(cat /proc/"$pid"/task/*/children 2>/dev/null) || true
	[[ -n ${c:-} ]] && printf '%s' "$c"
}

# wait_gone TIMEOUT PID...: 0 once none of the PIDs is alive, 1 after TIMEOUT seconds.
wait_gone() {
	local deadline=$((SECONDS + $1)) pid any
	shift
	while :; do
		any=0
		for pid in "$@"; do
			if pid_alive "$pid"; then
				any=1
				break
			fi
		done
		((any)) || return 0
		((SECONDS < deadline)) || return 1
		sleep 0.2
	done
}

pid_alive() {
	local state
	state=$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null) || return 1
	[[ $state != Z && $state != X ]]
}

# ---------------------------------------------------------------------------------------------
# Network

lab_netns_list() { ip netns list 2>/dev/null | awk '$1 ~ /^kdn[0-9]+$/ { print $1 }'; }
lab_veth_list() { ip -o link show 2>/dev/null | awk -F': ' '{ sub(/@.*/, "", $2); if ($2 ~ /^kdv[0-9]+$/) print $2 }'; }

# A low-priority "unreachable" route for the lab subnet: while the bridge is up its own route
# wins; while the lab is down, packets to 10.77.0.x fail at once instead of leaving through
# the host's default route. Kept after 'down' on purpose ('down --purge' removes it).
guard_route_up() {
	if [[ -z $(ip route show "$NET_PREFIX.0/24" type unreachable 2>/dev/null) ]]; then
		ip route add unreachable "$NET_PREFIX.0/24" metric "$GUARD_METRIC"
	fi
}

guard_route_down() {
	while [[ -n $(ip route show "$NET_PREFIX.0/24" type unreachable 2>/dev/null) ]]; do
		ip route del unreachable "$NET_PREFIX.0/24" metric "$GUARD_METRIC" 2>/dev/null ||
			ip route del unreachable "$NET_PREFIX.0/24"
	done
}

# The binary-cache host: a namespace of its own on the bridge, at CACHE_ADDR, for an HTTP
# server the tests and benchmarks start in it (ip netns exec kdcache nginx ...).
cache_net_up() {
	ip link show "$BRIDGE" >/dev/null 2>&1 || die "cache up: the lab is not up"
	ip netns list 2>/dev/null | grep -qx "$CACHE_NETNS\( .*\)\?" && return 0
	ip netns add "$CACHE_NETNS"
	ip link add "$CACHE_VETH" type veth peer name eth0 netns "$CACHE_NETNS"
	ip link set "$CACHE_VETH" master "$BRIDGE" up
	ip -n "$CACHE_NETNS" addr add "$CACHE_ADDR/24" dev eth0
	ip -n "$CACHE_NETNS" link set eth0 up
	ip -n "$CACHE_NETNS" link set lo up
}

# Kill what runs in the cache namespace, wait for it, then remove link and namespace.
cache_net_down() {
	local p deadline=$((SECONDS + 10))
	ip netns list 2>/dev/null | grep -q "^$CACHE_NETNS\b" || return 0
	for p in $(ip netns pids "$CACHE_NETNS" 2>/dev/null); do
		kill -KILL "$p" 2>/dev/null || true
	done
	while [[ -n $(ip netns pids "$CACHE_NETNS" 2>/dev/null) ]]; do
		((SECONDS < deadline)) || die "processes still in netns $CACHE_NETNS"
		sleep 0.2
	done
	ip link del "$CACHE_VETH" 2>/dev/null || true
	ip netns del "$CACHE_NETNS"
}

cmd_cache() {
	need_root
	init_state_dir
	lock_state
	case ${1:-} in
	up) cache_net_up && printf '%s\n' "$CACHE_ADDR" ;;
	down) cache_net_down ;;
	*) die "usage: cache up|down" ;;
	esac
}

net_up() {
	local n=$1 i
	guard_route_up
	ip link add "$BRIDGE" type bridge
	ip addr add "$HOST_ADDR/24" dev "$BRIDGE"
	ip link set "$BRIDGE" up
	for ((i = 1; i <= n; i++)); do node_net_up "$i"; done
}

# Node I's namespace and its link to the bridge.
node_net_up() {
	local i=$1 ns veth
	ns=$(node_netns "$i")
	veth=$(node_veth "$i")
	ip netns add "$ns"
	ip link add "$veth" type veth peer name eth0 netns "$ns"
	ip link set "$veth" master "$BRIDGE" up
	ip -n "$ns" addr add "$(node_addr "$i")/24" dev eth0
	ip -n "$ns" link set eth0 up
	ip -n "$ns" link set lo up
	[[ $WANT_K8S != 1 ]] || k8s_node_route "$ns"
}

# Node I's namespace gone (its processes must be gone first), with what was made in it.
node_net_down() {
	ip link del "$(node_veth "$1")" 2>/dev/null || true
	ip netns del "$(node_netns "$1")" 2>/dev/null || true
}

# ---------------------------------------------------------------------------------------------
# Node root trees: one full copy of the image per node, on a tmpfs (the copy takes ~1 s there,
# against 10+ s on this kind of VM's ext4), so every boot starts from a fresh machine.

node_root() { printf '%s/%s' "$RUN_DIR" "$(node_name "$1")"; }

# Is RUN_DIR the tmpfs this tool mounted?
run_dir_is_our_tmpfs() {
	[[ $(findmnt -n -o SOURCE,FSTYPE --mountpoint "$RUN_DIR" 2>/dev/null) == "kdeploy-lab tmpfs" ]]
}

# roots_up N IMAGE: the directory the N node roots are copied into: a tmpfs (the
# kernel's default size, half the memory) when the roots fit in it -- the image plus
# room for what kdeploy pushes; past that (50 nodes need ~20 GB) the roots stay on
# RUN_DIR's own file system, slower to create but not a full disk mid-benchmark.
roots_up() {
	local n=$1 image=$2 need room
	mkdir -p "$RUN_DIR"
	chmod 0700 "$RUN_DIR"
	[[ $USE_TMPFS == 1 ]] && ! run_dir_is_our_tmpfs || return 0
	# Room per node besides the image: what kdeploy pushes and keeps (~300 MB for the
	# etcd-only lab); a Kubernetes node also holds its binaries twice (store and
	# generation), its images and its pods' layers (~3 GB seen).
	local per=300
	[[ $WANT_K8S != 1 ]] || per=3000
	need=$((n * ($(du -sm "$image" | cut -f1) + per)))
	room=$(awk '/MemTotal/ { printf "%d", $2 / 2048 }' /proc/meminfo)
	if ((need > room)); then
		log "node roots on disk under $RUN_DIR: $n nodes need ~${need} MB, a tmpfs holds ${room} MB"
		return 0
	fi
	mount -t tmpfs -o mode=0700 kdeploy-lab "$RUN_DIR"
}

roots_down() {
	local r
	[[ -d $RUN_DIR ]] || return 0
	for r in "$RUN_DIR"/kdnode*; do
		[[ -e $r ]] && remove_tree "$r"
	done
	if run_dir_is_our_tmpfs; then
		umount "$RUN_DIR"
	fi
	rmdir "$RUN_DIR" 2>/dev/null || true
}

# Puts node I's own host key (from the state dir) into its root tree.
install_node_key() {
	local name r
	name=$(node_name "$1")
	r=$(node_root "$1")
	install -m 0600 "$STATE_DIR/nodes/$name/ssh_host_ed25519_key" "$r/etc/ssh/.ssh_host_ed25519_key.new"
	install -m 0644 "$STATE_DIR/nodes/$name/ssh_host_ed25519_key.pub" "$r/etc/ssh/ssh_host_ed25519_key.pub"
	mv -f -- "$r/etc/ssh/.ssh_host_ed25519_key.new" "$r/etc/ssh/ssh_host_ed25519_key"
}

# Makes node I's root tree: a copy of IMAGE with its hostname, host key and authorized_keys.
prepare_node() {
	local i=$1 image=$2 r
	r=$(node_root "$i")
	remove_tree "$r"
	cp -a -- "$image" "$r"
	printf '%s\n' "$(node_name "$i")" >"$r/etc/hostname"
	# The lab host as name server (it serves none: a query is refused), not the host's
	# own, which debootstrap copied and which is not the lab's to use. CoreDNS forwards
	# to what this lists and will not start with none.
	printf '# kdeploy lab node (lab/lab.sh): the lab names are in /etc/hosts\nnameserver %s\n' "$HOST_ADDR" >"$r/etc/resolv.conf"
	# Every node (and every boot) is a different machine.
	tr -d '-' </proc/sys/kernel/random/uuid >"$r/etc/machine-id"
	install_node_key "$i"
	install -m 0600 "$STATE_DIR/id_ed25519.pub" "$r/root/.ssh/authorized_keys"
	[[ $WANT_K8S != 1 ]] || k8s_prepare_root "$r"
}

PREP_PIDS=()
prepare_nodes() {
	local n=$1 image=$2 i rc=0 p
	for ((i = 1; i <= n; i++)); do
		prepare_node "$i" "$image" &
		PREP_PIDS+=("$!")
	done
	for p in "${PREP_PIDS[@]}"; do
		wait "$p" || rc=1
	done
	PREP_PIDS=()
	((rc == 0)) || die "could not prepare the node root trees in $RUN_DIR"
}

# ---------------------------------------------------------------------------------------------
# cgroups: one tree per node

# Without a systemd on the host (--register=no --keep-unit), nspawn puts a node below the
# cgroup it was started in (<that>/payload, itself in <that>/supervisor). Started from one
# shell, every node got the SAME cgroup tree: /system.slice/containerd.service was one
# directory in all three nodes, and one node's systemd removed it (after the unit stopped
# there) while another node's systemd was starting the unit in it: "Failed to
# attach to cgroup /system.slice/containerd.service: No such file or directory",
# status=219/CGROUP, when kdeploy restarted containerd on all nodes at once. So each nspawn
# starts in its own cgroup, <hierarchy>/kdeploy-lab/kdnode<i>, in every hierarchy nspawn
# places nodes in: the unified one and the v1 name=systemd one.
LAB_CGROUP=kdeploy-lab

cgroup_hierarchies() { # the host's unified (v2) and name=systemd (v1) hierarchies mounted here
	local d
	for d in /sys/fs/cgroup /sys/fs/cgroup/unified /sys/fs/cgroup/systemd; do
		if [[ -f $d/cgroup.procs ]]; then printf '%s\n' "$d"; fi
	done
}

# Create node I's own cgroup in each hierarchy; their directories in NODE_CGROUPS.
NODE_CGROUPS=()
node_cgroups() {
	local i=$1 h d
	NODE_CGROUPS=()
	while read -r h; do
		d=$h/$LAB_CGROUP/$(node_name "$i")
		mkdir -p "$d" || die "cannot create the cgroup $d"
		NODE_CGROUPS+=("$d")
	done < <(cgroup_hierarchies)
}

# Remove the nodes' cgroups (after their processes are gone), deepest first: what the
# nodes' systemd left below them too. A cgroup still holding a process stays (reported).
cgroups_down() {
	local h
	while read -r h; do
		[[ -d $h/$LAB_CGROUP ]] || continue
		find "$h/$LAB_CGROUP" -depth -type d -exec rmdir {} + 2>/dev/null || true
		if [[ -d $h/$LAB_CGROUP ]]; then
			log "could not remove every cgroup below $h/$LAB_CGROUP (a process left in one?)"
		fi
	done < <(cgroup_hierarchies; k8s_cgroup_tops)
}

# ---------------------------------------------------------------------------------------------
# up / down

start_node() {
	local i=$1 name ns logf
	name=$(node_name "$i")
	ns=$(node_netns "$i")
	logf=$STATE_DIR/logs/$name.log
	local -a extra=()
	if [[ -n ${KDEPLOY_LAB_NSPAWN_ARGS:-} ]]; then
		read -r -a extra <<<"$KDEPLOY_LAB_NSPAWN_ARGS"
	fi
	local -a run_ctr=()
	if [[ $RUN_CONTAINERS == 1 ]]; then
		# What runc (under containerd) needs to start containers inside a node; without it
		# containerd runs but every container fails: creating the session keyring (keyctl)
		# and the cgroup device filter (bpf) are filtered by nspawn's seccomp policy, and
		# runc's cgroup/device setup needs CAP_NET_ADMIN (scoped to the node's own netns).
		run_ctr=(--system-call-filter=@keyring --system-call-filter=bpf --capability=CAP_NET_ADMIN)
	fi
	# A cgroup v2 hierarchy inside the node (as on a real Debian 12 machine): on a host that
	# still mounts the v1 controllers, nspawn otherwise mounts them read-only in the node.
	local -a envs=()
	[[ $CGROUP_V2 != 1 ]] || envs=(SYSTEMD_NSPAWN_UNIFIED_HIERARCHY=1)
	# Kubernetes: the legacy hierarchy inside, with the node's own v1 controllers bound in.
	K8S_NSPAWN_ARGS=()
	K8S_CGROUPS=()
	if [[ $WANT_K8S == 1 ]]; then
		envs=(SYSTEMD_NSPAWN_UNIFIED_HIERARCHY=0 SYSTEMD_NSPAWN_API_VFS_WRITABLE=1)
		k8s_node_cgroups "$i"
	fi
	# The node's own cgroups (see node_cgroups): the subshell moves itself there, then
	# becomes nspawn (exec: $! stays nspawn's pid).
	node_cgroups "$i"
	(
		for cg in "${NODE_CGROUPS[@]+"${NODE_CGROUPS[@]}"}" "${K8S_CGROUPS[@]+"${K8S_CGROUPS[@]}"}"; do
			echo "$BASHPID" >"$cg/cgroup.procs" || {
				echo "lab: cannot move into the cgroup $cg" >&2
				exit 1
			}
		done
		# A node lives long: it must not keep open what its caller had open (a
		# benchmark's lock file, inherited, held the lock for the node's life).
		for fd in /proc/"$BASHPID"/fd/*; do
			fd=${fd##*/}
			if ((fd > 2)); then eval "exec $fd>&-"; fi
		done
		exec env "${envs[@]}" setsid systemd-nspawn --quiet --directory="$(node_root "$i")" --boot \
			--network-namespace-path="/run/netns/$ns" --register=no --keep-unit \
			--machine="$name" --console=read-only --resolv-conf=off --link-journal=no \
			"${run_ctr[@]}" "${K8S_NSPAWN_ARGS[@]+"${K8S_NSPAWN_ARGS[@]}"}" "${extra[@]}"
	) </dev/null >"$logf" 2>&1 9>&- 8>&- &
	local pid=$! tries=0
	printf '%s\n' "$pid" >"$STATE_DIR/run/$name.pid"
	# Until the subshell has become nspawn, node_pid would not recognise it (by its command
	# line) and take the node for dead: wait for the exec (or the subshell's exit).
	while pid_alive "$pid" && ! is_node_nspawn "$pid" "$name" && ((tries++ < 100)); do
		sleep 0.05
	done
}

# 0 if node I answers SSH with its known host key.
node_answers() {
	lab_ssh "$1" -o ConnectTimeout="${2:-2}" true </dev/null >/dev/null 2>&1
}

fail_node() {
	local i=$1 why=$2 name
	name=$(node_name "$i")
	log "$name ($(node_addr "$i")): $why; last lines of $STATE_DIR/logs/$name.log:"
	tail -n 25 "$STATE_DIR/logs/$name.log" 2>/dev/null |
		sed 's/\x1b\[[0-9;]*m//g' | awk '{ print "    " $0 }' >&2 || true
}

wait_ssh() {
	local n=$1 i nodes=()
	for ((i = 1; i <= n; i++)); do nodes+=("$i"); done
	wait_ssh_of "${nodes[@]}"
}

# wait_ssh_of I...: until every node named answers SSH (1 if one fails or times out).
wait_ssh_of() {
	local deadline i pending=("$@") still=() failed=0
	deadline=$((SECONDS + BOOT_TIMEOUT))
	while ((${#pending[@]})); do
		still=()
		for i in "${pending[@]}"; do
			if node_answers "$i" 2; then
				continue
			fi
			if ! node_pid "$i" >/dev/null; then
				fail_node "$i" "systemd-nspawn exited"
				failed=1
				continue
			fi
			still+=("$i")
		done
		pending=("${still[@]+"${still[@]}"}")
		((failed == 0)) || return 1
		((${#pending[@]})) || break
		if ((SECONDS >= deadline)); then
			for i in "${pending[@]}"; do
				fail_node "$i" "no SSH answer within ${BOOT_TIMEOUT}s"
			done
			return 1
		fi
		sleep 0.3
	done
}

summary() {
	local n=$1 i
	printf '%-9s %-12s\n' NODE ADDRESS
	for ((i = 1; i <= n; i++)); do
		printf '%-9s %-12s\n' "$(node_name "$i")" "$(node_addr "$i")"
	done
	printf 'ssh: ssh -F %q kdnode1   (or: lab/lab.sh ssh 1)\n' "$STATE_DIR/ssh_config"
}

# 0 if the lab recorded in lab.env is exactly N nodes from IMAGE, all running and answering.
lab_is_up() {
	local n=$1 image=$2 i
	read_lab_env
	# A Kubernetes-capable lab serves every test; a plain one does not serve up --k8s.
	[[ $LAB_N == "$n" && $LAB_IMAGE == "$image" ]] || return 1
	[[ $WANT_K8S != 1 || $LAB_K8S == 1 ]] || return 1
	ip link show "$BRIDGE" >/dev/null 2>&1 || return 1
	for ((i = 1; i <= n; i++)); do
		node_pid "$i" >/dev/null || return 1
		node_answers "$i" 3 || return 1
	done
	# no extra nodes beyond N
	[[ -z $(all_node_nspawns | awk -v n="$n" '{ sub(/kdnode/, "", $2); if ($2 + 0 > n) print }') ]]
}

anything_up() {
	[[ -n $(all_node_nspawns) || -n $(lab_netns_list) || -n $(lab_veth_list) ]] ||
		ip link show "$BRIDGE" >/dev/null 2>&1 || run_dir_is_our_tmpfs ||
		compgen -G "$RUN_DIR/kdnode*" >/dev/null
}

up_exit() {
	local p
	# Copies still running (interrupted 'up') must finish before their trees are removed.
	for p in "${PREP_PIDS[@]+"${PREP_PIDS[@]}"}"; do
		wait "$p" 2>/dev/null || true
	done
	if [[ ${UP_DONE:-1} == 0 ]]; then
		if [[ $KEEP_ON_FAIL == 1 ]]; then
			log "up failed; leaving the lab as it is (KDEPLOY_LAB_KEEP_ON_FAIL=1); lab/lab.sh down removes it"
		else
			log "up failed; tearing the lab down (KDEPLOY_LAB_KEEP_ON_FAIL=1 keeps it for inspection)"
			do_down || true
		fi
	fi
}

cmd_up() {
	local n=3 arg
	for arg in "$@"; do
		case $arg in
		--python) WANT_PYTHON=1 ;;
		--k8s) WANT_K8S=1 ;;
		-h | --help)
			usage
			return 0
			;;
		*)
			[[ $arg =~ ^[1-9][0-9]*$ ]] || die "up: bad argument '$arg' (want a node count or --python)"
			n=$arg
			;;
		esac
	done
	((n <= MAX_NODES)) || die "up: at most $MAX_NODES nodes"
	need_root
	need_cmds systemd-nspawn ip ssh ssh-keygen flock setsid nsenter
	init_state_dir
	lock_state

	local image start i
	image=$(image_dir)
	if image_ok && lab_is_up "$n" "$image"; then
		log "lab already up ($n nodes, image $(image_name))"
		summary "$n"
		return 0
	fi
	if anything_up; then
		log "a lab (or part of one) is up; tearing it down to re-create it"
		do_down
	fi
	ensure_image

	start=$(now_ms)
	ensure_client_key
	for ((i = 1; i <= n; i++)); do ensure_node_keys "$i"; done
	write_client_files "$n"
	rm -f -- "$STATE_DIR"/run/*.pid
	printf 'N=%s\nIMAGE=%s\nK8S=%s\n' "$n" "$image" "$WANT_K8S" >"$STATE_DIR/lab.env"

	# From here on, a failure (or ^C) tears down what was started, unless asked to keep it.
	UP_DONE=0
	trap 'exit 130' INT TERM
	trap up_exit EXIT
	roots_up "$n" "$image"
	inotify_room "$n"
	prepare_nodes "$n" "$image"
	net_up "$n"
	if [[ $WANT_K8S == 1 ]]; then
		k8s_sysctls_up
		registry_up
	fi
	for ((i = 1; i <= n; i++)); do start_node "$i"; done
	wait_ssh "$n" || die "not all nodes came up"
	boot_trees $(seq 1 "$n")
	UP_DONE=1
	trap - EXIT INT TERM
	log "$n node(s) up, answering SSH, in $(elapsed "$start")"
	summary "$n"
}

# boot_trees I...: each node's files and units as they are before any switch
# (lab/node-tree.sh) in $STATE_DIR/run/<name>.boot, which a reset must bring the node
# back to (tests/lab/reset.rs, tests/lab/kubernetes.rs).
boot_trees() {
	local i pid leader jobs=()
	for i in "$@"; do
		pid=$(node_pid "$i") && leader=$(node_leader "$pid") || die "$(node_name "$i") is not running"
		nsenter --target "$leader" --mount --uts --ipc --net --pid -- \
			env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin sh -c "$(cat "$SCRIPT_DIR/node-tree.sh")" \
			>"$STATE_DIR/run/$(node_name "$i").boot" &
		jobs+=("$!")
	done
	# (only these: the nodes' own processes are this shell's children too)
	wait "${jobs[@]}"
}

# stop_or_kill PID...: wait for nspawn processes that were sent SIGTERM; past
# STOP_TIMEOUT (a kubelet delays a shutdown by its grace period) kill them.
stop_or_kill() {
	local pid leader
	wait_gone "$STOP_TIMEOUT" "$@" && return 0
	log "nodes did not stop within ${STOP_TIMEOUT}s; killing them"
	for pid in "$@"; do
		pid_alive "$pid" || continue
		if leader=$(node_leader "$pid"); then
			kill -KILL "$leader" 2>/dev/null || true
		fi
		kill -KILL "$pid" 2>/dev/null || true
	done
	wait_gone 10 "$@" || die "systemd-nspawn processes still alive: $*"
}

do_down() {
	local -a pids=() names=()
	local pid line ns veth leader deadline p
	# nspawn processes: from pid files and from /proc (covers lost pid files).
	while read -r line; do
		[[ -n $line ]] || continue
		pids+=("${line%% *}")
		names+=("${line#* }")
	done < <(all_node_nspawns)
	for pid in "${pids[@]+"${pids[@]}"}"; do
		# SIGTERM: nspawn asks the node's systemd to power off cleanly, then exits.
		kill -TERM "$pid" 2>/dev/null || true
	done
	stop_or_kill "${pids[@]+"${pids[@]}"}"
	# Anything left in our namespaces (a container whose nspawn died): kill and wait.
	for ns in $(lab_netns_list); do
		for p in $(ip netns pids "$ns" 2>/dev/null); do
			kill -KILL "$p" 2>/dev/null || true
		done
	done
	deadline=$((SECONDS + 10))
	for ns in $(lab_netns_list); do
		while [[ -n $(ip netns pids "$ns" 2>/dev/null) ]]; do
			((SECONDS < deadline)) || die "processes still in netns $ns: $(ip netns pids "$ns" | tr '\n' ' ')"
			sleep 0.2
		done
	done
	cache_net_down
	registry_down
	# Only now the links, the namespaces, the bridge.
	for veth in $(lab_veth_list); do
		ip link del "$veth" 2>/dev/null || true
	done
	for ns in $(lab_netns_list); do
		ip netns del "$ns"
	done
	if ip link show "$BRIDGE" >/dev/null 2>&1; then
		ip link del "$BRIDGE"
	fi
	# The nodes' cgroups, root trees (and their tmpfs).
	cgroups_down
	roots_down
	k8s_sysctls_down
	rm -f -- "$STATE_DIR"/run/*.pid
	if ((${#names[@]})); then
		log "stopped ${names[*]}"
	fi
}

# reboot I...: power the nodes off, give each a fresh root tree and network namespace (as
# 'up' does: every boot is a fresh machine), boot them again with the lab's current settings, wait for SSH.
cmd_reboot() {
	(($#)) || die "reboot: which nodes? (lab/lab.sh reboot 6 7 8)"
	need_root
	init_state_dir
	lock_state
	read_lab_env
	[[ -n $LAB_N ]] || die "reboot: no lab is up"
	WANT_K8S=$LAB_K8S
	local i pid pids=()
	for i in "$@"; do
		[[ $i =~ ^[1-9][0-9]*$ ]] && ((i <= LAB_N)) || die "reboot: no node $i in this lab of $LAB_N"
		if pid=$(node_pid "$i"); then
			kill -TERM "$pid" 2>/dev/null || true
			pids+=("$pid")
		fi
	done
	stop_or_kill "${pids[@]+"${pids[@]}"}"
	for i in "$@"; do
		# A fresh network namespace too: what the node made there (a CNI bridge with
		# its address, routes, iptables rules) outlives its processes.
		node_net_down "$i"
		node_net_up "$i"
		prepare_node "$i" "$LAB_IMAGE"
		start_node "$i"
	done
	wait_ssh_of "$@" || die "reboot: not every node came back"
	boot_trees "$@"
	log "rebooted node(s) $*"
}

cmd_down() {
	local purge=0 arg
	for arg in "$@"; do
		case $arg in
		--purge) purge=1 ;;
		*) die "down: bad argument '$arg'" ;;
		esac
	done
	need_root
	need_cmds ip flock
	init_state_dir
	lock_state
	do_down
	if ((purge)); then
		guard_route_down
		log "lab is down (guard route removed)"
	else
		log "lab is down"
	fi
}

# ---------------------------------------------------------------------------------------------
# status / ssh / rekey / env

cmd_status() {
	need_root
	[[ -d $STATE_DIR ]] || {
		echo "lab is down (no state dir $STATE_DIR)"
		return 1
	}
	STATE_DIR=$(cd "$STATE_DIR" && pwd)
	read_lab_env
	local n=${LAB_N:-0} i name pid proc sshs all=0 extra
	if ! anything_up; then
		echo "lab is down"
		return 1
	fi
	printf '%-9s %-12s %-9s %-8s %s\n' NODE ADDRESS PROCESS SSH PID
	for ((i = 1; i <= n; i++)); do
		name=$(node_name "$i")
		if pid=$(node_pid "$i"); then
			proc=running
			if node_answers "$i" 3; then sshs=ok; else
				sshs=no
				all=1
			fi
		else
			pid=-
			proc=stopped
			sshs=-
			all=1
		fi
		printf '%-9s %-12s %-9s %-8s %s\n' "$name" "$(node_addr "$i")" "$proc" "$sshs" "$pid"
	done
	extra=$(all_node_nspawns | awk -v n="$n" '{ i = $2; sub(/kdnode/, "", i); if (i + 0 > n) print $2 " (pid " $1 ")" }')
	if [[ -n $extra ]]; then
		echo "unexpected nodes running (not in lab.env): $extra"
		all=1
	fi
	ip link show "$BRIDGE" >/dev/null 2>&1 || {
		echo "bridge $BRIDGE missing"
		all=1
	}
	if ((all == 0)); then
		echo "lab is up: $n node(s), image ${LAB_IMAGE##*/}"
	else
		echo "lab is partly up (lab/lab.sh down cleans it)"
	fi
	return "$all"
}

cmd_ssh() {
	(($#)) || die "usage: lab/lab.sh ssh I [CMD...]"
	check_index "$1"
	[[ -f $STATE_DIR/ssh_config ]] || die "no $STATE_DIR/ssh_config: run lab/lab.sh up"
	ip link show "$BRIDGE" >/dev/null 2>&1 || die "the lab is down (no bridge $BRIDGE): run lab/lab.sh up"
	STATE_DIR=$(cd "$STATE_DIR" && pwd)
	local i=$1
	shift
	exec ssh -F "$STATE_DIR/ssh_config" "$(node_name "$i")" "$@"
}

cmd_exec() {
	(($# >= 2)) || die "usage: lab/lab.sh exec I CMD..."
	check_index "$1"
	need_root
	local i=$1 pid leader
	shift
	pid=$(node_pid "$i") || die "$(node_name "$i") is not running"
	leader=$(node_leader "$pid") || die "cannot find the init process of $(node_name "$i")"
	exec nsenter --target "$leader" --mount --uts --ipc --net --pid -- \
		env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root sh -c "$*"
}

cmd_rekey() {
	local i='' update=0 arg
	for arg in "$@"; do
		case $arg in
		--update-known-hosts) update=1 ;;
		*) i=$arg ;;
		esac
	done
	[[ -n $i ]] || die "usage: lab/lab.sh rekey I [--update-known-hosts]"
	check_index "$i"
	need_root
	need_cmds ssh-keygen ssh-keyscan nsenter flock
	init_state_dir
	lock_state
	local name pid leader want got deadline
	name=$(node_name "$i")
	pid=$(node_pid "$i") || die "$name is not running"
	leader=$(node_leader "$pid") || die "cannot find the init process of $name"
	new_host_key "$i"
	install_node_key "$i"
	want=$(cut -d' ' -f2 "$STATE_DIR/nodes/$name/ssh_host_ed25519_key.pub")
	nsenter --target "$leader" --mount --uts --ipc --net --pid -- \
		systemctl restart ssh.service 9>&-
	deadline=$((SECONDS + 15))
	while :; do
		got=$(ssh-keyscan -T 2 -t ed25519 "$(node_addr "$i")" 2>/dev/null | awk '{ print $3 }' | head -n 1) || true
		[[ $got == "$want" ]] && break
		((SECONDS < deadline)) || die "$name does not serve its new host key"
		sleep 0.2
	done
	if ((update)); then
		read_lab_env
		write_known_hosts "${LAB_N:-$i}"
		log "$name has a new host key; known_hosts updated"
	else
		log "$name has a new host key; known_hosts NOT updated (ssh to it must now fail;" \
			"lab/lab.sh known-hosts fixes that)"
	fi
}

cmd_known_hosts() {
	need_root
	init_state_dir
	lock_state
	read_lab_env
	[[ -n $LAB_N ]] || die "no lab recorded in $STATE_DIR/lab.env: run lab/lab.sh up"
	write_known_hosts "$LAB_N"
	log "rewrote $STATE_DIR/known_hosts"
}

cmd_env() {
	[[ -d $STATE_DIR ]] || die "no state dir $STATE_DIR: run lab/lab.sh up"
	STATE_DIR=$(cd "$STATE_DIR" && pwd)
	read_lab_env
	[[ -n $LAB_N ]] || die "no lab recorded in $STATE_DIR/lab.env: run lab/lab.sh up"
	local i names=() addrs=()
	for ((i = 1; i <= LAB_N; i++)); do
		names+=("$(node_name "$i")")
		addrs+=("$(node_addr "$i")")
	done
	printf 'KDEPLOY_LAB_DIR=%q\n' "$STATE_DIR"
	printf 'KDEPLOY_LAB_SSH_CONFIG=%q\n' "$STATE_DIR/ssh_config"
	printf 'KDEPLOY_LAB_KNOWN_HOSTS=%q\n' "$STATE_DIR/known_hosts"
	printf 'KDEPLOY_LAB_KEY=%q\n' "$STATE_DIR/id_ed25519"
	printf 'KDEPLOY_LAB_USER=root\n'
	printf 'KDEPLOY_LAB_NODES=%q\n' "${names[*]}"
	printf 'KDEPLOY_LAB_ADDRS=%q\n' "${addrs[*]}"
	printf 'export KDEPLOY_LAB_DIR KDEPLOY_LAB_SSH_CONFIG KDEPLOY_LAB_KNOWN_HOSTS KDEPLOY_LAB_KEY'
	printf ' KDEPLOY_LAB_USER KDEPLOY_LAB_NODES KDEPLOY_LAB_ADDRS\n'
}

cmd_image() {
	local arg
	for arg in "$@"; do
		case $arg in
		--python) WANT_PYTHON=1 ;;
		*) die "image: bad argument '$arg'" ;;
		esac
	done
	need_root
	ensure_image
	log "image ready: $(image_dir)"
}

cmd_deps() {
	need_root
	local p missing=() want=("${HOST_PACKAGES[@]}")
	[[ ${1:-} != --k8s && $WANT_K8S != 1 ]] || want+=("${K8S_HOST_PACKAGES[@]}")
	for p in "${want[@]}"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
	done
	if ((${#missing[@]} == 0)); then
		log "host packages present: ${want[*]}"
		return 0
	fi
	log "installing ${missing[*]}"
	DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}" ||
		{
			apt-get update
			DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
		}
}

main() {
	local cmd=${1:-help}
	(($#)) && shift
	case $cmd in
	up) cmd_up "$@" ;;
	down) cmd_down "$@" ;;
	reboot) cmd_reboot "$@" ;;
	status) cmd_status "$@" ;;
	ssh) cmd_ssh "$@" ;;
	exec) cmd_exec "$@" ;;
	rekey) cmd_rekey "$@" ;;
	known-hosts) cmd_known_hosts "$@" ;;
	cache) cmd_cache "$@" ;;
	env) cmd_env "$@" ;;
	image) cmd_image "$@" ;;
	deps) cmd_deps "$@" ;;
	help | -h | --help) usage ;;
	*)
		usage >&2
		exit 2
		;;
	esac
}

main "$@"
