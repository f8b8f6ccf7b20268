#!/usr/bin/env bash
# images.sh - the container images the lab's Kubernetes runs, built from the binaries that
# lab/build-k8s.sh built (and a few of the host's Debian programs), and pushed to the lab's
# own registry: nothing can be pulled from a public registry here, so the lab takes the
# air-gapped path a real user takes (kubernetes.imageRepo and download.dockerImageRepo
# pointing at a private registry).
#
# Usage: lab/images.sh push REGISTRY [REPOSITORY...]   e.g. 10.77.0.1:5000 (plain HTTP);
#        only the repositories named (e.g. coredns/coredns), else all
#        lab/images.sh list            the image references, one per line
# Each image is an OCI image made with umoci (a root file system of the program, the shared
# libraries it links and what it execs) and copied with skopeo; an image already in the
# registry with the same content key is skipped, so a second run costs seconds.
set -euo pipefail

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CACHE_DIR=${KDEPLOY_LAB_CACHE:-/var/cache/kdeploy-lab}
WORK=$CACHE_DIR/images
BUILD=$SCRIPT_DIR/build-k8s.sh

log() { printf 'images: %s\n' "$*" >&2; }
die() {
	printf 'images: error: %s\n' "$*" >&2
	exit 1
}

bin() { printf '%s/%s' "$("$BUILD" path "$1")" "$2"; }
k8s_version() { basename "$("$BUILD" path kubernetes)" | sed 's/^kubernetes-//'; }
ver() { basename "$("$BUILD" path "$1")" | sed "s/^$1-//"; }

# The pause tag kubeadm pulls and the kubelet expects for this Kubernetes version: the lab's
# own pause program (lab/images/pause) does what the upstream one does, under that tag.
pause_tag() {
	"$(bin kubernetes kubeadm)" config images list --kubernetes-version "v$(k8s_version)" 2>/dev/null |
		sed -n 's#^.*/pause:##p'
}

# The images: "repository:tag builder" (repository below the registry). The tags name what
# is inside: upstream versions of what was built, Debian's nginx version, our echo server
# by its lab/images/echo/VERSION, and pause by the tag kubeadm expects.
image_list() {
	local k
	k=v$(k8s_version)
	cat <<EOF
kube-apiserver:$k static_kube kube-apiserver
kube-controller-manager:$k static_kube kube-controller-manager
kube-scheduler:$k static_kube kube-scheduler
kube-proxy:$k kube_proxy
pause:$(pause_tag) pause
coredns/coredns:v$(ver coredns) coredns
flannel/flannel:v$(ver flannel) flannel
flannel/flannel-cni-plugin:v$(ver flannel-cni) flannel_cni
library/nginx:$(dpkg-query -W -f '${Version}' nginx-light | sed 's/-.*//') nginx
kdeploy-lab/echo:$(cat "$SCRIPT_DIR/images/echo/VERSION") echo_server
kdeploy-lab/toolbox:1 toolbox
EOF
}

# --- root file system helpers (ROOTFS is the image's root being filled) -------------------

# add_file SRC DEST [MODE]: copy a host file into the image.
add_file() {
	install -D -m "${3:-0755}" "$1" "$ROOTFS$2"
}

# add_elf PATH [DEST]: a dynamically linked host program and every library it links.
add_elf() {
	local src=$1 dest=${2:-$1} lib
	add_file "$src" "$dest"
	while read -r lib; do
		[[ -n $lib && -e $lib ]] || continue
		add_file "$(readlink -f "$lib")" "$lib" 0755
	done < <(ldd "$src" 2>/dev/null | awk '/=>/ { print $3 } /^[[:space:]]*\/lib/ { print $1 }')
}

# add_busybox APPLET...: the static busybox and links for the applets named.
add_busybox() {
	local a
	add_file /bin/busybox /bin/busybox
	for a in "$@"; do ln -sf busybox "$ROOTFS/bin/$a"; done
}

# add_iptables: iptables in nf_tables mode (what the host and every node use), with its
# extensions, and conntrack: what kube-proxy and flanneld exec.
add_iptables() {
	local l x
	add_elf /usr/sbin/xtables-nft-multi
	for l in iptables iptables-save iptables-restore ip6tables ip6tables-save ip6tables-restore; do
		ln -sf xtables-nft-multi "$ROOTFS/usr/sbin/$l"
	done
	for x in /usr/lib/x86_64-linux-gnu/xtables/*.so; do add_elf "$x"; done
	add_elf /usr/sbin/conntrack
	mkdir -p "$ROOTFS/run" "$ROOTFS/var/run" "$ROOTFS/tmp"
	ln -sf ../usr/sbin "$ROOTFS/sbin" 2>/dev/null || true
}

add_passwd() {
	mkdir -p "$ROOTFS/etc"
	printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n' >"$ROOTFS/etc/passwd"
	printf 'root:x:0:\nnogroup:x:65534:\n' >"$ROOTFS/etc/group"
}

# --- one builder per image: fill ROOTFS and set ENTRYPOINT (a JSON-less list of words) ----

static_kube() {
	add_file "$(bin kubernetes "$1")" "/usr/local/bin/$1"
	ENTRYPOINT=("/usr/local/bin/$1")
}
kube_proxy() {
	add_file "$(bin kubernetes kube-proxy)" /usr/local/bin/kube-proxy
	add_iptables
	ENTRYPOINT=(/usr/local/bin/kube-proxy)
}
pause() {
	add_file "$(bin pause pause)" /pause
	ENTRYPOINT=(/pause)
}
coredns() {
	add_file "$(bin coredns coredns)" /coredns
	ENTRYPOINT=(/coredns)
}
flannel() {
	add_file "$(bin flannel flannel)" /opt/bin/flanneld
	add_iptables
	add_busybox sh cp
	ENTRYPOINT=(/opt/bin/flanneld)
}
flannel_cni() {
	add_file "$(bin flannel-cni flannel)" /flannel
	add_busybox sh cp
	ENTRYPOINT=(/bin/sh)
}
# Debian's nginx has the stream module as a loadable module (the upstream image builds it
# in): the entry point loads it, then includes the configuration the pod mounts.
nginx() {
	add_elf /usr/sbin/nginx
	add_elf /usr/lib/nginx/modules/ngx_stream_module.so
	add_busybox sh
	add_passwd
	mkdir -p "$ROOTFS/var/lib/nginx" "$ROOTFS/var/log/nginx" "$ROOTFS/run" "$ROOTFS/tmp"
	cat >"$ROOTFS/docker-entrypoint.sh" <<'EOF'
#!/bin/sh
# Loads the stream module, then runs nginx with the configuration mounted at /etc/nginx.
printf 'load_module /usr/lib/nginx/modules/ngx_stream_module.so;\ninclude /etc/nginx/nginx.conf;\n' >/tmp/nginx.conf
exec /usr/sbin/nginx -c /tmp/nginx.conf -g 'daemon off;' "$@"
EOF
	chmod 0755 "$ROOTFS/docker-entrypoint.sh"
	ENTRYPOINT=(/docker-entrypoint.sh)
}
echo_server() {
	add_file "$(bin echo echo)" /kd-echo
	ENTRYPOINT=(/kd-echo)
}
toolbox() {
	add_busybox sh wget nslookup sleep cat echo ls true date
	ENTRYPOINT=(/bin/sh)
}

# --- building and pushing -------------------------------------------------------------------

# content_key BUILDER ARGS: what the image is made of (the builder's text and its inputs'
# hashes), so an unchanged image is not rebuilt or pushed again.
content_key() {
	{
		declare -f "$1" add_file add_elf add_busybox add_iptables add_passwd
		printf '%s\n' "$@"
		# the Kubernetes version only where its binaries go: the other images stay
		# the same across the versions the lab switches between
		case $1 in static_kube | kube_proxy) "$BUILD" path kubernetes ;; esac
		"$BUILD" path pause
		"$BUILD" path echo
		ls -l /bin/busybox /usr/sbin/nginx /usr/sbin/xtables-nft-multi
	} | sha256sum | cut -c1-16
}

build_and_push() {
	local registry=$1 ref=$2 builder=$3
	shift 3
	local key stamp layout=$WORK/oci bundle=$WORK/bundle
	key=$(content_key "$builder" "$@")
	stamp=$WORK/pushed/$(printf '%s' "$registry/$ref" | tr '/:' '__')
	if [[ -f $stamp && $(cat "$stamp") == "$key" ]] &&
		skopeo inspect --tls-verify=false --raw "docker://$registry/$ref" >/dev/null 2>&1; then
		log "$ref: up to date"
		return 0
	fi
	log "$ref: building"
	rm -rf "$bundle"
	[[ -d $layout ]] || umoci init --layout "$layout"
	umoci new --image "$layout:$key"
	umoci unpack --image "$layout:$key" "$bundle" >/dev/null
	ROOTFS=$bundle/rootfs
	ENTRYPOINT=()
	"$builder" "$@"
	umoci repack --image "$layout:$key" "$bundle"
	local -a cfg=(--config.entrypoint "${ENTRYPOINT[0]}")
	local e
	for e in "${ENTRYPOINT[@]:1}"; do cfg+=(--config.entrypoint "$e"); done
	umoci config --image "$layout:$key" "${cfg[@]}" \
		--config.env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		--architecture amd64 --os linux
	skopeo copy --quiet --dest-tls-verify=false "oci:$layout:$key" "docker://$registry/$ref"
	rm -rf "$bundle"
	mkdir -p "$WORK/pushed"
	printf '%s\n' "$key" >"$stamp"
}

main() {
	case ${1:-} in
	list) image_list | awk '{ print $1 }' ;;
	push)
		local registry=${2:?push REGISTRY [REPOSITORY...]}
		shift 2
		local only=" $* "
		command -v umoci >/dev/null && command -v skopeo >/dev/null ||
			die "umoci and skopeo are needed (apt-get install umoci skopeo)"
		mkdir -p "$WORK"
		# one push at a time: every build shares $WORK (tests push from parallel threads)
		exec 9>"$WORK/.lock"
		flock -w 1800 9 || die "another lab/images.sh push holds $WORK/.lock"
		local ref builder rest
		while read -r ref builder rest; do
			[[ $only == "  " || $only == *" ${ref%%:*} "* ]] || continue
			# shellcheck disable=SC2086 # rest: the builder's arguments, one word each
			build_and_push "$registry" "$ref" "$builder" $rest
		done < <(image_list)
		;;
	*) die "usage: lab/images.sh push REGISTRY | list" ;;
	esac
}

main "$@"
