#!/usr/bin/env bash
# build-k8s.sh - build the real Kubernetes binaries (and what runs beside them) for the lab
# from their Go modules, with the machine's Go and the Go module proxy, and cache them by
# version: only the first run pays.
#
# No package registry ships kubelet, kubeadm or the control-plane binaries; the Go module
# proxy serves k8s.io/kubernetes and its staging modules. `go install k8s.io/kubernetes/...@v`
# refuses (its go.mod has replace lines), so each build is a module of our own that requires
# the component at one version and replaces every k8s.io staging module with its published
# v0.<minor>.<patch>. Nothing built here is committed; nothing is faked.
#
# Usage: lab/build-k8s.sh [COMPONENT...]   (default: all)
#   kubernetes  kubeadm kubelet kube-apiserver kube-controller-manager kube-scheduler
#               kube-proxy kubectl                      ($KDEPLOY_K8S_VERSION, 1.34.4)
#   coredns     coredns                                 ($KDEPLOY_COREDNS_VERSION)
#   flannel     flanneld                                ($KDEPLOY_FLANNEL_VERSION)
#   flannel-cni the "flannel" CNI plugin                ($KDEPLOY_FLANNEL_CNI_VERSION)
#   cni         bridge host-local loopback portmap      ($KDEPLOY_CNI_VERSION)
#   etcd        etcd etcdctl                            ($KDEPLOY_ETCD_VERSION)
#   crictl      crictl                                  ($KDEPLOY_CRICTL_VERSION)
#   containerd  containerd containerd-shim-runc-v2 ctr  ($KDEPLOY_CONTAINERD_VERSION; only when named)
#   pause       the sandbox image's only process (lab/images/pause, ours)
#   echo        kd-echo: the lab's test server (lab/images/echo, ours)
# Output: $KDEPLOY_LAB_CACHE/bin/<component>-<version>/<binaries>, plus a "done" marker.
# `lab/build-k8s.sh path COMPONENT` prints that directory.
set -euo pipefail

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CACHE_DIR=${KDEPLOY_LAB_CACHE:-/var/cache/kdeploy-lab}
BIN_ROOT=$CACHE_DIR/bin
WORK_ROOT=$CACHE_DIR/gobuild

K8S_VERSION=${KDEPLOY_K8S_VERSION:-1.34.4}
# The newest of each that the Go module proxy serves here (CoreDNS 1.12 and the separate
# flannel-io/cni-plugin module are not served; the flannel CNI plugin is the same program in
# containernetworking/plugins up to v0.9.1, where it began).
COREDNS_VERSION=${KDEPLOY_COREDNS_VERSION:-1.14.7}
FLANNEL_VERSION=${KDEPLOY_FLANNEL_VERSION:-0.28.10}
FLANNEL_CNI_VERSION=${KDEPLOY_FLANNEL_CNI_VERSION:-0.9.1}
CNI_VERSION=${KDEPLOY_CNI_VERSION:-1.9.0}
CRICTL_VERSION=${KDEPLOY_CRICTL_VERSION:-1.34.0}
# kubeadm 1.34 refuses an external etcd older than 3.5.24 (Debian 12 has 3.4).
ETCD_VERSION=${KDEPLOY_ETCD_VERSION:-3.5.33}
# The stdlib's pin for Kubernetes 1.34 (Kubespray's); runc stays Debian's.
CONTAINERD_VERSION=${KDEPLOY_CONTAINERD_VERSION:-2.1.4}
# The CNI reference plugins stdlib/versions.nix places (cni.plugins), by source folder.
CNI_PLUGINS="main/bridge main/dummy main/host-device main/ipvlan main/loopback main/macvlan
main/ptp main/tap main/vlan ipam/dhcp ipam/host-local ipam/static meta/bandwidth meta/firewall
meta/portmap meta/sbr meta/tuning meta/vrf"

export CGO_ENABLED=0 GOFLAGS=-buildvcs=false

log() { printf 'build-k8s: %s\n' "$*" >&2; }
die() {
	printf 'build-k8s: error: %s\n' "$*" >&2
	exit 1
}

version_of() {
	case $1 in
	kubernetes) echo "$K8S_VERSION" ;;
	coredns) echo "$COREDNS_VERSION" ;;
	flannel) echo "$FLANNEL_VERSION" ;;
	flannel-cni) echo "$FLANNEL_CNI_VERSION" ;;
	cni) echo "$CNI_VERSION" ;;
	crictl) echo "$CRICTL_VERSION" ;;
	containerd) echo "$CONTAINERD_VERSION" ;;
	etcd) echo "$ETCD_VERSION" ;;
	pause | echo) printf '%s-%s' "$(cat "$SCRIPT_DIR/images/$1/VERSION")" "$(go env GOVERSION)" ;;
	*) die "unknown component: $1" ;;
	esac
}

out_dir() { printf '%s/%s-%s' "$BIN_ROOT" "$1" "$(version_of "$1")"; }

# new_module DIR MODULE@VERSION: an empty module that requires MODULE at VERSION.
new_module() {
	local dir=$1 req=$2
	rm -rf "$dir" && mkdir -p "$dir"
	printf 'module kdeploy.lab/build\n\ngo 1.24\n\nrequire %s %s\n' "${req%@*}" "${req#*@}" >"$dir/go.mod"
}

# build_in DIR OUT LDFLAGS PKG...: go build each package into OUT (static, stripped).
build_in() {
	local dir=$1 out=$2 ldflags=$3
	shift 3
	(cd "$dir" && go mod download >/dev/null 2>&1 || true)
	(cd "$dir" && GOFLAGS="$GOFLAGS -mod=mod" go build -trimpath -ldflags "-s -w $ldflags" -o "$out/" "$@")
}

build_kubernetes() {
	local v=$K8S_VERSION out=$1 dir=$WORK_ROOT/kubernetes-$K8S_VERSION
	local minor=${v#*.} patch
	patch=${minor#*.}
	minor=${minor%%.*}
	new_module "$dir" "k8s.io/kubernetes@v$v"
	# Every staging module the release's own go.mod points into ./staging, replaced by its
	# published v0.<minor>.<patch>.
	(cd "$dir" && go mod download "k8s.io/kubernetes@v$v")
	local modfile
	modfile=$(cd "$dir" && go env GOMODCACHE)/cache/download/k8s.io/kubernetes/@v/v$v.mod
	local m
	for m in $(sed -n 's#^[[:space:]]*\(k8s.io/[a-z0-9-]*\) => ./staging/.*#\1#p' "$modfile"); do
		printf 'replace %s => %s v0.%s.%s\n' "$m" "$m" "$minor" "$patch" >>"$dir/go.mod"
	done
	# What hack/lib/version.sh stamps: kubeadm and kubelet compare versions.
	local pkg ld=""
	for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
		ld+=" -X $pkg.gitVersion=v$v -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor"
		ld+=" -X $pkg.gitCommit=0000000000000000000000000000000000000000 -X $pkg.gitTreeState=clean"
		ld+=" -X $pkg.buildDate=1970-01-01T00:00:00Z"
	done
	build_in "$dir" "$out" "$ld" \
		k8s.io/kubernetes/cmd/kubeadm k8s.io/kubernetes/cmd/kubelet \
		k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager \
		k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kube-proxy \
		k8s.io/kubernetes/cmd/kubectl
}

# build_module OUT MODULE VERSION PKG...: build packages of MODULE@VERSION.
build_module() {
	local out=$1 mod=$2 v=$3 dir
	shift 3
	dir=$WORK_ROOT/$(basename "$mod")-$v
	new_module "$dir" "$mod@v$v"
	build_in "$dir" "$out" "" "$@"
}

# build_ours OUT NAME: a program of this repository (lab/images/NAME), standard library only.
build_ours() {
	local out=$1 name=$2 dir=$WORK_ROOT/$2
	rm -rf "$dir" && mkdir -p "$dir"
	cp "$SCRIPT_DIR/images/$name/main.go" "$dir/"
	printf 'module kdeploy.lab/%s\n\ngo 1.22\n' "$name" >"$dir/go.mod"
	(cd "$dir" && go build -trimpath -ldflags "-s -w" -o "$out/$name" .)
}

build_component() {
	local c=$1 out
	out=$(out_dir "$c")
	if [[ -f $out/done ]]; then
		log "$c $(version_of "$c"): cached in $out"
		return 0
	fi
	rm -rf "$out" && mkdir -p "$out"
	local t0=$SECONDS
	log "$c $(version_of "$c"): building (the first time takes long on 2 cores)"
	case $c in
	kubernetes) build_kubernetes "$out" ;;
	coredns) build_module "$out" github.com/coredns/coredns "$COREDNS_VERSION" github.com/coredns/coredns ;;
	flannel)
		# flanneld links its Tencent Cloud VPC backend, whose SDK module the proxy does not
		# serve: that one package is replaced by lab/images/tencent-vpc-stand-in (every
		# call fails; the lab's flannel uses host-gw).
		local dir=$WORK_ROOT/flannel-$FLANNEL_VERSION
		new_module "$dir" "github.com/flannel-io/flannel@v$FLANNEL_VERSION"
		printf 'replace github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/vpc => %s\n' \
			"$SCRIPT_DIR/images/tencent-vpc-stand-in" >>"$dir/go.mod"
		# Its udp backend is C (cgo), as upstream builds it: linked statically.
		CGO_ENABLED=1 build_in "$dir" "$out" "-linkmode external -extldflags -static" github.com/flannel-io/flannel
		;;
	flannel-cni)
		build_module "$out" github.com/containernetworking/plugins "$FLANNEL_CNI_VERSION" \
			github.com/containernetworking/plugins/plugins/meta/flannel
		;;
	cni)
		local p pkgs=()
		for p in $CNI_PLUGINS; do pkgs+=("github.com/containernetworking/plugins/plugins/$p"); done
		build_module "$out" github.com/containernetworking/plugins "$CNI_VERSION" "${pkgs[@]}"
		;;
	etcd)
		build_module "$out" go.etcd.io/etcd/server/v3 "$ETCD_VERSION" go.etcd.io/etcd/server/v3
		mv "$out/server" "$out/etcd" # go names it after the package folder
		build_module "$out" go.etcd.io/etcd/etcdctl/v3 "$ETCD_VERSION" go.etcd.io/etcd/etcdctl/v3
		;;
	crictl) build_module "$out" sigs.k8s.io/cri-tools "$CRICTL_VERSION" sigs.k8s.io/cri-tools/cmd/crictl ;;
	containerd)
		# without cgo: the btrfs snapshotter (cgo only) is left out, as the lab uses overlayfs
		build_module "$out" github.com/containerd/containerd/v2 "$CONTAINERD_VERSION" \
			github.com/containerd/containerd/v2/cmd/containerd \
			github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2 \
			github.com/containerd/containerd/v2/cmd/ctr
		;;
	pause | echo) build_ours "$out" "$c" ;;
	esac
	date -u +%FT%TZ >"$out/done"
	log "$c $(version_of "$c"): built in $((SECONDS - t0)) s -> $out"
}

main() {
	command -v go >/dev/null || die "go is not installed (the lab builds Kubernetes with it)"
	if [[ ${1:-} == path ]]; then
		out_dir "${2:?path COMPONENT}"
		return
	fi
	local cs=("$@")
	((${#cs[@]})) || cs=(kubernetes etcd coredns flannel flannel-cni cni crictl pause echo)
	local c
	for c in "${cs[@]}"; do build_component "$c"; done
}

main "$@"
