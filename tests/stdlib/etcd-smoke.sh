#!/bin/sh
# Start a 3-member etcd on 127.0.0.2-4 from the etcd.env files the stdlib generates
# (etcd-loopback.nix), run the generated health check, stop everything.
# Only loopback addresses are used. Member 1 keeps the 127.0.0.1:2379 listener of its
# etcd.env; members 2 and 3 drop it (all three share the host's 127.0.0.1).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
tmp=${1:-$(mktemp -d)}
work="$tmp/etcd-smoke"
mkdir -p "$work"
version=$(/usr/bin/etcd --version | sed -n 's/^etcd Version: //p')
env -i PATH="$PATH" HOME="$work" nix-instantiate --eval --strict --json -I kdeploy="$root/stdlib" \
  --argstr etcdVersion "$version" "$here/etcd-loopback.nix" > "$work/cluster.json"
python3 - "$work" <<'PY'
import json, sys
work = sys.argv[1]
d = json.load(open(f"{work}/cluster.json"))
for n, node in d["nodes"].items():
    etcd = [p for p in node["phases"] if p["name"] == "etcd"][0]
    env = [f for f in etcd["files"] if f["path"] == "/etc/etcd.env"][0]["source"]["text"]
    open(f"{work}/{n}.env", "w").write(env)
    open(f"{work}/{n}.address", "w").write(node["address"])
    open(f"{work}/{n}.check", "w").write(etcd["checks"][0]["run"])
    open(f"{work}/{n}.retries", "w").write(str(etcd["checks"][0]["retries"]))
PY
pids=""
cleanup() {
  for p in $pids; do kill "$p" 2>/dev/null || true; done
  for p in $pids; do wait "$p" 2>/dev/null || true; done
}
trap cleanup EXIT
for n in m1 m2 m3; do
  addr=$(cat "$work/$n.address")
  (
    set -a
    . "$work/$n.env"
    ETCD_DATA_DIR="$work/data-$n"
    if [ "$n" != m1 ]; then ETCD_LISTEN_CLIENT_URLS="http://$addr:2379"; fi
    set +a
    exec /usr/bin/etcd
  ) > "$work/$n.log" 2>&1 &
  pids="$pids $!"
done
check=$(cat "$work/m1.check")
retries=$(cat "$work/m1.retries")
i=0
until sh -c "$check"; do
  i=$((i + 1))
  if [ "$i" -ge "$retries" ]; then echo "health check failed: $check"; tail -5 "$work"/m*.log; exit 1; fi
  sleep 1
done
members=$(/usr/bin/etcdctl --endpoints=http://127.0.0.2:2379 member list | wc -l)
echo "members: $members"
test "$members" -eq 3
/usr/bin/etcdctl --endpoints=http://127.0.0.3:2379 put kdeploy-smoke ok >/dev/null
test "$(/usr/bin/etcdctl --endpoints=http://127.0.0.4:2379 get --print-value-only kdeploy-smoke)" = ok
echo "etcd smoke test passed"
