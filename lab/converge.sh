#!/usr/bin/env bash
# README command 1: on a fresh Debian machine (root), build kdeploy and what the lab's
# Kubernetes runs, boot a local lab of 3 real nodes, converge clusters/lab.nix onto them
# (a real Kubernetes: kubeadm, kubelet, control plane, flannel, CoreDNS), then show it
# working: every node Ready, a Deployment of two replicas answering through a ClusterIP
# Service from a pod on the third node, DNS from a pod, /readyz. Re-running it is the
# no-op re-run (seconds: builds, images and lab are cached or already up).
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n== %s\n' "$*"; }

step "host packages (apt)"
need=(systemd-container debootstrap debian-archive-keyring openssh-client iproute2 util-linux
  containerd runc docker-registry umoci skopeo curl iptables conntrack busybox-static
  nginx-light libnginx-mod-stream)
missing=()
for p in "${need[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if ((${#missing[@]})); then
	echo "installing ${missing[*]}"
	apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
	# packaged services are not used (and there is no systemd on a CI host)
	service nginx stop >/dev/null 2>&1 || true
fi
command -v go >/dev/null || { echo "converge: Go is needed to build Kubernetes for the lab" >&2; exit 1; }

step "building kdeploy"
cargo build --release --quiet

step "building Kubernetes, etcd, CoreDNS, flannel, CNI plugins, crictl (cached by version; the first time takes tens of minutes)"
lab/build-k8s.sh

step "booting the lab (3 Kubernetes-capable nodes at 10.77.0.11-13, a registry at 10.77.0.1:5000)"
lab/lab.sh up 3 --k8s

step "images into the lab registry"
lab/images.sh push 10.77.0.1:5000

step "kdeploy switch clusters/lab.nix"
./target/release/kdeploy switch clusters/lab.nix --ssh-key .lab/id_ed25519 --known-hosts .lab/known_hosts \
	--allow-local /var/cache/kdeploy-lab/bin

step "Kubernetes, seen from k8s-master"
lab/lab.sh exec 1 'export KUBECONFIG=/etc/kubernetes/admin.conf
set -e
kubectl wait --for=condition=Ready node --all --timeout=300s
kubectl get nodes -o wide
echo "readyz: $(kubectl get --raw /readyz)"'
lab/lab.sh exec 1 'export KUBECONFIG=/etc/kubernetes/admin.conf; kubectl apply -f -' <lab/echo.yaml
lab/lab.sh exec 1 'export KUBECONFIG=/etc/kubernetes/admin.conf
set -e
kubectl rollout status deployment/kd-echo --timeout=300s
kubectl wait --for=condition=Ready pod/kd-client --timeout=300s
kubectl get pods -o wide
echo "-- the Service kd-echo, called from kd-client on $(kubectl get pod kd-client -o jsonpath={.spec.nodeName}):"
for i in 1 2 3 4; do kubectl exec kd-client -- wget -qO- http://kd-echo/; done
echo "-- DNS from a pod (CoreDNS):"
kubectl exec kd-client -- nslookup kubernetes.default.svc.cluster.local'
echo
echo "converge: done. kubectl on k8s-master: lab/lab.sh ssh 1 kubectl --kubeconfig /etc/kubernetes/admin.conf get pods -A"
