#!/bin/sh
# Tests of the stdlib under both evaluators: real Nix (nix-instantiate from Debian's
# nix-bin) and kdeploy's own (the binary, with this working copy's stdlib). Users get
# kdeploy's errors, and the stdlib promises to stay valid Nix: every case must give the
# same value under both, or fail with the same error under both.
#   tests/stdlib/run.sh            all tests, with target/release/kdeploy (cargo build --release
#                                  --bin kdeploy first) or the binary named by KDEPLOY
#   tests/stdlib/run.sh --regen    rewrite the golden files with Nix first (review the diff!)
# Parts:
#   0. prerequisites  any missing tool is a failure naming its Debian package: a check
#                     that silently does not run hides the failures it exists to find
#   1. fail-*.nix   each must fail under both; its "# expect:" lines must all occur in each
#                   error, and a line marked "# <-" must be the FILE:LINE each points at
#   2. values       priorities.nix (node > role > cluster, mkDefault/mkForce), inventory.nix
#                   (Kubespray's inventory-builder rules), paths.nix (no store paths)
#   3. golden       clusters/{lab,seed,ha}.nix == golden/<name>.json; big.nix by sha256 of
#                   the JSON text (kdeploy must print it byte for byte as Nix does)
#   4. content      variants.nix and etcd-loopback.nix give the same value under both; in
#                   them and the example clusters generated YAML parses, hook/check
#                   scripts pass `sh -n`, units pass systemd-analyze verify (its one
#                   allowed complaint: a binary the unit runs is absent from this host);
#                   the etcd-only lab's (tests/clusters/lab-etcd.nix) containerd config
#                   parses with the host's containerd 1.6, its etcd.env flags exist in etcd 3.4
#   5. etcd-smoke   a 3-member etcd 3.4 on 127.0.0.2-4 started from generated etcd.env
#                   files, checked with the generated health check
#   6. schemas      every Kubernetes object of the example clusters (static pods, CNI,
#                   DNS, addons) is valid, strictly, under the OpenAPI schemas of the
#                   cluster's Kubernetes version (PyPI kubernetes-validate)
#                   (tests/stdlib/k8s-schemas.py); the component configurations (kubeadm,
#                   kubelet, kube-proxy, scheduler) against the fields of the upstream Go
#                   types (component-schemas.json, made by gen-component-schemas.py)
set -u
here=$(cd "$(dirname "$0")" && pwd -P)
root=$(cd "$here/../.." && pwd -P)
stdlib="$root/stdlib"
kdeploy=${KDEPLOY:-$root/target/release/kdeploy}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
pass() { printf 'ok   %s\n' "$1"; }
fail() { printf 'FAIL %s\n' "$1"; fails=$((fails + 1)); }
# A result of one evaluator: "ok   kdeploy fail-x", so a failure names the evaluator.
result() { # result OK(0/1) EVALUATOR TEXT
  if [ "$1" = 1 ]; then pass "$(printf '%-7s %s' "$2" "$3")"; else fail "$(printf '%-7s %s' "$2" "$3")"; fi
}

# 0. prerequisites -----------------------------------------------------------------------
missing=0
lack() { printf 'FAIL missing %s\n' "$1"; missing=1; }
command -v nix-instantiate >/dev/null 2>&1 || lack "nix-instantiate (Debian package nix-bin)"
[ -x "$kdeploy" ] || lack "kdeploy binary $kdeploy (cargo build --release --bin kdeploy, or set KDEPLOY)"
if command -v python3 >/dev/null 2>&1; then
  python3 -c 'import yaml' 2>/dev/null || lack "python3 module yaml (Debian package python3-yaml)"
  python3 -c 'import kubernetes_validate' 2>/dev/null || lack "python3 module kubernetes_validate (pip install kubernetes-validate)"
else lack "python3 (Debian packages python3 python3-yaml)"; fi
command -v systemd-analyze >/dev/null 2>&1 || lack "systemd-analyze (Debian package systemd)"
[ -x /usr/bin/containerd ] || lack "/usr/bin/containerd (Debian package containerd)"
[ -x /usr/bin/etcd ] || lack "/usr/bin/etcd (Debian package etcd-server)"
[ -x /usr/bin/etcdctl ] || lack "/usr/bin/etcdctl (Debian package etcd-client)"
if [ $missing = 1 ]; then echo "stdlib tests not run: prerequisites missing (.ci/run installs them)"; exit 1; fi

# ev EVALUATOR FILE [--arg/--argstr ...] -> the value as JSON on stdout, errors on stderr.
# kdeploy runs from the project root, as users run it, so it names files relative to it.
# Neither sees the caller's environment (NIX_PATH, KDEPLOY_STDLIB, colour settings).
ev() {
  ev_which=$1 ev_file=$2
  shift 2
  case $ev_which in
    nix) env -i PATH="$PATH" HOME="$tmp/home" nix-instantiate --eval --strict --json --readonly-mode \
           -I kdeploy="$stdlib" "$@" "$ev_file" ;;
    kdeploy) (cd "$root" && env -i PATH="$PATH" HOME="$tmp/home" "$kdeploy" eval "$ev_file" \
           --json --stdlib "$stdlib" "$@") ;;
  esac
}
# How an evaluator names FILE in its errors.
shown() { if [ "$1" = kdeploy ]; then printf '%s' "${2#"$root"/}"; else printf '%s' "$2"; fi; }
# sha256 of the JSON text: Nix ends it without a newline, kdeploy with one.
json_sha() {
  if [ -z "$(tail -c 1 "$1")" ]; then head -c -1 "$1" | sha256sum | cut -d' ' -f1
  else sha256sum < "$1" | cut -d' ' -f1; fi
}
sorted() { python3 -m json.tool --sort-keys; }
# same EVALUATOR TEXT GOT WANTED: the result of comparing two files, with the difference.
same() {
  if cmp -s "$3" "$4"; then result 1 "$1" "$2"
  else result 0 "$1" "$2"; diff "$3" "$4" | head -20 | cut -c1-300; fi
}

if [ "${1:-}" = "--regen" ]; then
  for c in lab seed ha; do
    ev nix "$root/clusters/$c.nix" | sorted > "$here/golden/$c.json"
  done
  ev nix "$root/clusters/big.nix" | sha256sum | cut -d' ' -f1 > "$here/golden/big.sha256"
  for t in priorities inventory paths custom; do
    ev nix "$here/$t.nix" | sorted > "$here/$t.expected.json"
  done
  echo "golden files regenerated"
fi

# 1. failing clusters ------------------------------------------------------------------
for f in "$here"/fail-*.nix; do
  name=$(basename "$f" .nix)
  grep '^# expect: ' "$f" | sed 's/^# expect: //' > "$tmp/expects"
  line=$(grep -n '# <-' "$f" | cut -d: -f1)
  for e in nix kdeploy; do
    ev $e "$f" >/dev/null 2>"$tmp/err"
    rc=$?
    if [ $rc = 0 ]; then result 0 $e "$name: evaluation succeeded"; continue; fi
    ok=1
    # 1 is an evaluation error; anything else (2 usage, 101 a panic) is not the error named
    if [ $rc != 1 ]; then ok=0; echo "  exit code $rc: $(head -c 600 "$tmp/err")"; fi
    while IFS= read -r want; do
      if ! grep -qF -- "$want" "$tmp/err"; then
        ok=0; echo "  expected: $want"; echo "  got:      $(head -c 600 "$tmp/err")"
      fi
    done < "$tmp/expects"
    # kdeploy's "↳ while calling … at FILE:LINE" notes are the way there, not the place
    # the error points at
    if [ -n "$line" ] && ! grep -v '↳ ' "$tmp/err" | grep -qF -- "$(shown $e "$f"):$line:"; then
      ok=0; echo "  expected location $(shown $e "$f"):$line: in: $(head -c 600 "$tmp/err")"
    fi
    result $ok $e "$name"
  done
done

# 2. value tests: <name>.nix must evaluate to <name>.expected.json ------------------------
for x in "$here"/*.expected.json; do
  name=$(basename "$x" .expected.json)
  for e in nix kdeploy; do
    ev $e "$here/$name.nix" | sorted > "$tmp/$e.$name.json"
    same $e "$name" "$tmp/$e.$name.json" "$x"
  done
done

# 3. golden closures ---------------------------------------------------------------------
for c in lab seed ha; do
  for e in nix kdeploy; do
    ev $e "$root/clusters/$c.nix" > "$tmp/$e.$c.raw"
    sorted < "$tmp/$e.$c.raw" > "$tmp/$e.$c.json"
    same $e "golden $c" "$tmp/$e.$c.json" "$here/golden/$c.json"
  done
done
for e in nix kdeploy; do
  start=$(date +%s.%N)
  ev $e "$root/clusters/big.nix" > "$tmp/big.raw"
  end=$(date +%s.%N)
  if [ "$(json_sha "$tmp/big.raw")" = "$(cat "$here/golden/big.sha256")" ]; then
    result 1 $e "golden big ($(awk "BEGIN { printf \"%.2f\", $end - $start }") s wall, $(wc -c < "$tmp/big.raw") bytes of JSON)"
  else result 0 $e "golden big (sha256 of the JSON differs)"; fi
done
rm -f "$tmp/big.raw"

# 4. generated content -------------------------------------------------------------------
# No expected values here: Nix's value is the reference, kdeploy's must equal it.
etcd_version=$(/usr/bin/etcd --version | sed -n 's/^etcd Version: //p')
for t in variants etcd-loopback; do
  if [ $t = etcd-loopback ]; then set -- --argstr etcdVersion "$etcd_version"; else set --; fi
  if ev nix "$here/$t.nix" "$@" > "$tmp/nix.$t.raw"; then result 1 nix "$t (evaluates)"
  else result 0 nix "$t (evaluates)"; continue; fi
  ev kdeploy "$here/$t.nix" "$@" | sorted > "$tmp/kdeploy.$t.json"
  sorted < "$tmp/nix.$t.raw" > "$tmp/nix.$t.json"
  same kdeploy "$t (the value Nix gives)" "$tmp/kdeploy.$t.json" "$tmp/nix.$t.json"
done

python3 - "$tmp" <<'EOF' && pass "content of lab, seed, ha, variants, etcd-loopback (YAML, shell syntax, schema)" || fail "content"
import json, subprocess, sys
import yaml
tmp = sys.argv[1]
bad = 0
clusters = {c: json.load(open(f"{tmp}/nix.{c}.raw")) for c in ["lab", "seed", "ha", "etcd-loopback"]}
clusters.update(json.load(open(f"{tmp}/nix.variants.raw")))
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
                if t is not None and f["path"].endswith((".yml", ".yaml")):
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

python3 - "$tmp" <<'EOF' && pass "units of lab, seed, ha, variants, etcd-loopback (systemd-analyze verify)" || fail "units (systemd-analyze verify)"
import json, os, re, subprocess, sys
tmp = sys.argv[1]
# etcd-loopback's units start the host's etcd: no complaint at all is allowed there
clusters = [json.load(open(f"{tmp}/nix.{c}.raw")) for c in ["lab", "seed", "ha", "etcd-loopback"]]
clusters += json.load(open(f"{tmp}/nix.variants.raw")).values()
units = sorted({(u["name"], u["text"]) for d in clusters for n in d["nodes"].values()
                for p in n["phases"] for u in p["units"]})
if not units: print("  no units found"); sys.exit(1)
bad = 0
for i, (name, text) in enumerate(units):
    os.makedirs(f"{tmp}/units/{i}")
    path = f"{tmp}/units/{i}/{name}"
    open(path, "w").write(text)
    # The binaries the units start are deployed by kdeploy, so the test host lacks most
    # of them: systemd's complaint about exactly such a binary is the only one allowed.
    commands = [re.sub(r"^[-@:+!]+", "", l.split("=", 1)[1].strip()).split()[0]
                for l in text.splitlines() if re.match(r"Exec[A-Za-z]*=", l)]
    absent = {f"{name}: Command {c} is not executable: No such file or directory"
              for c in commands if not os.path.exists(c)}
    r = subprocess.run(["systemd-analyze", "verify", path], capture_output=True, text=True)
    said = [l.strip() for l in (r.stdout + r.stderr).splitlines() if l.strip()]
    errs = [l for l in said if l not in absent]
    if errs or (r.returncode != 0 and not said):
        print(f"  {name} (exit {r.returncode}):", errs); bad += 1
sys.exit(1 if bad else 0)
EOF

# The dialects of Debian's own containerd 1.6 and etcd 3.4: the etcd-only lab
# (tests/clusters/lab-etcd.nix) deploys exactly those binaries.
ev nix "$root/tests/clusters/lab-etcd.nix" > "$tmp/nix.lab-etcd.raw"
python3 -c "
import json,sys
d=json.load(open('$tmp/nix.lab-etcd.raw'))
fs=[f for p in d['nodes']['k8s-master']['phases'] for f in p['files'] if f['path']=='/etc/containerd/config.toml']
open('$tmp/config.toml','w').write(fs[0]['source']['text'])"
if /usr/bin/containerd --config "$tmp/config.toml" config dump > "$tmp/dump.toml" 2>"$tmp/err" \
   && grep -q 'SystemdCgroup = true' "$tmp/dump.toml" && grep -q 'config_path = "/etc/containerd/certs.d"' "$tmp/dump.toml"; then
  pass "lab config.toml accepted by $(/usr/bin/containerd --version | cut -d' ' -f3)"
else fail "lab config.toml with host containerd: $(cat "$tmp/err")"; fi

/usr/bin/etcd --help 2>&1 | grep -oE '^ +--[a-z0-9-]+' | tr -d ' ' > "$tmp/etcd-flags"
python3 - "$tmp" <<'EOF' && pass "lab etcd.env flags known to etcd $etcd_version" || fail "lab etcd.env flags"
import json, sys
tmp = sys.argv[1]
flags = set(open(f"{tmp}/etcd-flags").read().split())
d = json.load(open(f"{tmp}/nix.lab-etcd.raw"))
env = [f for p in d["nodes"]["k8s-master"]["phases"] for f in p["files"] if f["path"] == "/etc/etcd.env"][0]["source"]["text"]
bad = [l for l in env.splitlines() if l.startswith("ETCD_") and "--" + l.split("=")[0][5:].lower().replace("_", "-") not in flags]
if bad: print("unknown to this etcd:", bad)
sys.exit(1 if bad else 0)
EOF

# 5. etcd smoke test ---------------------------------------------------------------------
if [ -s "$tmp/nix.etcd-loopback.raw" ] && "$here/etcd-smoke.sh" "$tmp/nix.etcd-loopback.raw" "$tmp" > "$tmp/smoke.log" 2>&1; then
  pass "etcd-smoke (3 members of etcd $etcd_version from generated etcd.env)"
else fail "etcd-smoke"; tail -20 "$tmp/smoke.log" 2>/dev/null; fi

# 6. Kubernetes schemas ------------------------------------------------------------------
for c in lab seed ha; do
  if out=$(python3 "$here/k8s-schemas.py" "$here/golden/$c.json" 2>&1); then
    pass "$c: $(printf '%s' "$out" | tail -n 1)"
  else fail "$c Kubernetes schemas"; printf '%s\n' "$out" | tail -n 20; fi
done
for c in lab seed ha; do
  if out=$(python3 "$here/component-configs.py" "$here/golden/$c.json" 2>&1); then
    pass "$c: $(printf '%s' "$out" | tail -n 1)"
  else fail "$c component configurations"; printf '%s\n' "$out" | tail -n 20; fi
done

echo
if [ $fails -eq 0 ]; then echo "all stdlib tests passed"; else echo "$fails stdlib test(s) failed"; exit 1; fi
