#!/bin/sh
# Start a 3-member etcd on 127.0.0.2-4 from the etcd.env files the stdlib generates,
# run the generated health check, stop everything.
#   etcd-smoke.sh CLUSTER_JSON [WORKDIR]
# CLUSTER_JSON is etcd-loopback.nix evaluated with --argstr etcdVersion set to the
# version of /usr/bin/etcd (run.sh evaluates it under both evaluators first).
# Only loopback addresses are used. Member 1 keeps the 127.0.0.1:2379 listener of its
# etcd.env; members 2 and 3 drop it (all three share the host's 127.0.0.1).
set -eu
cluster=$1
tmp=${2:-$(mktemp -d)}
work="$tmp/etcd-smoke"
mkdir -p "$work"
cp "$cluster" "$work/cluster.json"
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
# SIGKILL: on SIGTERM the leader hands leadership over to a member that is stopping
# too, and waits 15 s for that to time out; the data directories are thrown away anyway.
cleanup() {
  for p in $pids; do kill -KILL "$p" 2>/dev/null || true; done
  for p in $pids; do wait "$p" 2>/dev/null || true; done
}
trap cleanup EXIT
for n in m1 m2 m3; do
  addr=$(cat "$work/$n.address")
  (
    set -a
    # shellcheck source=/dev/null  # the generated env file
    . "$work/$n.env"
    # exported (set -a) for etcd
    export ETCD_DATA_DIR="$work/data-$n"
    if [ "$n" != m1 ]; then export ETCD_LISTEN_CLIENT_URLS="http://$addr:2379"; fi
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
