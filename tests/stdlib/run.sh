#!/bin/sh
# Tests of the stdlib against real Nix (nix-instantiate from Debian's nix-bin).
#   tests/stdlib/run.sh            all tests
#   tests/stdlib/run.sh --regen    rewrite the golden files first (review the diff!)
# Parts:
#   1. fail-*.nix   each must fail; its "# expect:" lines must all occur in the error,
#                   and a line marked "# <-" must be the FILE:LINE the error points at
#   2. values       priorities.nix (node > role > cluster, mkDefault/mkForce), inventory.nix
#                   (Kubespray's inventory-builder rules), paths.nix (no store paths)
#   3. golden       clusters/{lab,seed,ha}.nix == golden/<name>.json; big.nix by sha256
#   4. content      generated YAML parses, hook/check scripts pass `sh -n`, units pass
#                   systemd-analyze verify (if present), lab containerd config parses
#                   with the host's containerd 1.6, lab etcd.env flags exist in etcd 3.4
#   5. etcd-smoke   a 3-member etcd 3.4 on 127.0.0.2-4 started from generated etcd.env
#                   files, checked with the generated health check (needs /usr/bin/etcd)
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
stdlib="$root/stdlib"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
pass() { printf 'ok   %s\n' "$1"; }
fail() { printf 'FAIL %s\n' "$1"; fails=$((fails + 1)); }

nixeval() { # nixeval FILE [extra args] -> JSON on stdout, error text on stderr
  env -i PATH="$PATH" HOME="$tmp/home" nix-instantiate --eval --strict --json \
    -I kdeploy="$stdlib" "$@"
}

if [ "${1:-}" = "--regen" ]; then
  for c in lab seed ha; do
    nixeval "$root/clusters/$c.nix" | python3 -m json.tool --sort-keys > "$here/golden/$c.json"
  done
  nixeval "$root/clusters/big.nix" | sha256sum | cut -d' ' -f1 > "$here/golden/big.sha256"
  for t in priorities inventory paths; do
    nixeval "$here/$t.nix" | python3 -m json.tool --sort-keys > "$here/$t.expected.json"
  done
  echo "golden files regenerated"
fi

# 1. failing clusters ------------------------------------------------------------------
for f in "$here"/fail-*.nix; do
  name=$(basename "$f" .nix)
  if nixeval "$f" >/dev/null 2>"$tmp/err"; then fail "$name: evaluation succeeded"; continue; fi
  ok=1
  grep '^# expect: ' "$f" | sed 's/^# expect: //' > "$tmp/expects"
  while IFS= read -r want; do
    if ! grep -qF -- "$want" "$tmp/err"; then
      ok=0; echo "  expected: $want"; echo "  got:      $(head -c 600 "$tmp/err")"
    fi
  done < "$tmp/expects"
  line=$(grep -n '# <-' "$f" | cut -d: -f1)
  if [ -n "$line" ] && ! grep -qF -- "$f:$line:" "$tmp/err"; then
    ok=0; echo "  expected location $f:$line: in: $(head -c 600 "$tmp/err")"
  fi
  if [ $ok = 1 ]; then pass "$name"; else fail "$name"; fi
done

# 2. value tests: <name>.nix must evaluate to <name>.expected.json ------------------------
for e in "$here"/*.expected.json; do
  name=$(basename "$e" .expected.json)
  if nixeval "$here/$name.nix" | python3 -m json.tool --sort-keys > "$tmp/$name.json" && cmp -s "$tmp/$name.json" "$e"; then
    pass "$name"
  else fail "$name"; diff "$tmp/$name.json" "$e" | head -20 | cut -c1-300; fi
done

# 3. golden closures ---------------------------------------------------------------------
for c in lab seed ha; do
  if nixeval "$root/clusters/$c.nix" > "$tmp/$c.raw" && python3 -m json.tool --sort-keys < "$tmp/$c.raw" > "$tmp/$c.json" \
     && cmp -s "$tmp/$c.json" "$here/golden/$c.json"; then
    pass "golden $c"
  else fail "golden $c"; diff "$tmp/$c.json" "$here/golden/$c.json" | head -20 | cut -c1-300; fi
done
start=$(date +%s.%N)
nixeval "$root/clusters/big.nix" > "$tmp/big.raw"
end=$(date +%s.%N)
if [ "$(sha256sum < "$tmp/big.raw" | cut -d' ' -f1)" = "$(cat "$here/golden/big.sha256")" ]; then
  pass "golden big ($(awk "BEGIN { printf \"%.2f\", $end - $start }") s wall, $(wc -c < "$tmp/big.raw") bytes of JSON)"
else fail "golden big (sha256 differs)"; fi

# 4. generated content -------------------------------------------------------------------
nixeval "$here/variants.nix" > "$tmp/variants.raw" || fail "variants.nix does not evaluate"
python3 - "$tmp" <<'EOF' && pass "content of lab, seed, ha and variants.nix (YAML, shell syntax, schema)" || fail "content"
import json, subprocess, sys, os
try:
    import yaml  # PyYAML; without it the YAML parse check is skipped
except ImportError:
    yaml = None
    print("note: python3 yaml module missing, YAML files not parsed")
tmp = sys.argv[1]
bad = 0
clusters = {c: json.load(open(f"{tmp}/{c}.raw")) for c in ["lab", "seed", "ha"]}
clusters.update(json.load(open(f"{tmp}/variants.raw")))
for c, d in clusters.items():
    assert d["phaseOrder"] == ["preinstall", "container-runtime", "download", "etcd", "kubelet",
                               "control-plane", "cni", "addons", "resolvconf"], d["phaseOrder"]
    for n, node in d["nodes"].items():
        assert [p["name"] for p in node["phases"]] == d["phaseOrder"]
        seen = set()
        for p in node["phases"]:
            for f in p["files"]:
                assert f["path"].startswith("/") and len(f["source"]) == 1, f
                assert f["path"] not in seen, ("duplicate path", n, f["path"])
                seen.add(f["path"])
                t = f["source"].get("text")
                if t is not None and f["path"].endswith((".yml", ".yaml")) and yaml is not None:
                    try: list(yaml.safe_load_all(t))
                    except Exception as e: print(c, n, f["path"], e); bad += 1
            for u in p["units"]:
                for trig in u["restartTriggers"]:
                    assert trig in seen, (c, n, u["name"], "trigger of a later or unknown file", trig)
            for s in [h["run"] for h in p["hooks"]] + [h["unless"] for h in p["hooks"] if h["unless"]] + [k["run"] for k in p["checks"]]:
                r = subprocess.run(["sh", "-n"], input=s.encode(), capture_output=True)
                if r.returncode != 0: print(c, n, p["name"], r.stderr.decode(), s[:300]); bad += 1
sys.exit(1 if bad else 0)
EOF

if command -v systemd-analyze >/dev/null 2>&1; then
  python3 - "$tmp" <<'EOF' && pass "units (systemd-analyze verify)" || fail "units (systemd-analyze verify)"
import json, subprocess, sys, os
tmp = sys.argv[1]
d = json.load(open(f"{tmp}/ha.raw"))
os.makedirs(f"{tmp}/units", exist_ok=True)
bad = 0
for n in ["cp1", "worker1"]:
    for p in d["nodes"][n]["phases"]:
        for u in p["units"]:
            path = f"{tmp}/units/{u['name']}"
            open(path, "w").write(u["text"])
            r = subprocess.run(["systemd-analyze", "verify", path], capture_output=True, text=True)
            # binaries are not installed on the test host: only that complaint is allowed
            errs = [l for l in r.stderr.splitlines() if l.strip() and "is not executable" not in l
                    and "No such file or directory" not in l]
            if errs: print(u["name"], errs); bad += 1
sys.exit(1 if bad else 0)
EOF
fi

if [ -x /usr/bin/containerd ]; then
  python3 -c "
import json,sys
d=json.load(open('$tmp/lab.raw'))
fs=[f for p in d['nodes']['k8s-master']['phases'] for f in p['files'] if f['path']=='/etc/containerd/config.toml']
open('$tmp/config.toml','w').write(fs[0]['source']['text'])"
  if /usr/bin/containerd --config "$tmp/config.toml" config dump > "$tmp/dump.toml" 2>"$tmp/err" \
     && grep -q 'SystemdCgroup = true' "$tmp/dump.toml" && grep -q 'config_path = "/etc/containerd/certs.d"' "$tmp/dump.toml"; then
    pass "lab config.toml accepted by $(/usr/bin/containerd --version | cut -d' ' -f3)"
  else fail "lab config.toml with host containerd: $(cat "$tmp/err")"; fi
fi

if [ -x /usr/bin/etcd ]; then
  /usr/bin/etcd --help 2>&1 | grep -oE '^ +--[a-z0-9-]+' | tr -d ' ' > "$tmp/etcd-flags"
  python3 - "$tmp" <<'EOF' && pass "lab etcd.env flags known to $(/usr/bin/etcd --version | head -1)" || fail "lab etcd.env flags"
import json, sys
tmp = sys.argv[1]
flags = set(open(f"{tmp}/etcd-flags").read().split())
d = json.load(open(f"{tmp}/lab.raw"))
env = [f for p in d["nodes"]["k8s-master"]["phases"] for f in p["files"] if f["path"] == "/etc/etcd.env"][0]["source"]["text"]
bad = [l for l in env.splitlines() if l.startswith("ETCD_") and "--" + l.split("=")[0][5:].lower().replace("_", "-") not in flags]
if bad: print("unknown to this etcd:", bad)
sys.exit(1 if bad else 0)
EOF
fi

# 5. etcd smoke test ---------------------------------------------------------------------
if [ -x /usr/bin/etcd ] && [ -x /usr/bin/etcdctl ]; then
  if "$here/etcd-smoke.sh" "$tmp" > "$tmp/smoke.log" 2>&1; then pass "etcd-smoke (3 members of etcd 3.4 from generated etcd.env)"
  else fail "etcd-smoke"; tail -20 "$tmp/smoke.log"; fi
fi

echo
if [ $fails -eq 0 ]; then echo "all stdlib tests passed"; else echo "$fails stdlib test(s) failed"; exit 1; fi
