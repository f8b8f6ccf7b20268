#!/usr/bin/env python3
"""Check that the lab nodes are in the end state of a kdeploy closure.

Usage: verify.py CLUSTER_JSON --tool kdeploy|ansible --ssh-config .lab/ssh_config

CLUSTER_JSON is `kdeploy eval CLUSTER --json` (the value kdeploy itself deploys). For every
node, over one SSH session per node:

- activated phases: every file at its path (symlinks followed) has the sha256 of the
  closure's content (inline text, or the deployer-local file for `local` sources) and the
  closure's mode/owner/group; every unit file /etc/systemd/system/<name> has the unit's
  text (mode 0644); every directory exists with its mode/owner/group; every unit with
  `enable` is enabled and active.
- generate-only phases (activate = false): every file (and unit file) is written with its
  content and mode in the tool's staging area (kdeploy: the newest generation holding the
  phase, /var/lib/kdeploy/generations/N/<phase>/files/<path>; Ansible:
  /var/lib/ansible-staged/<phase>/files/<path>), is NOT at its real path, and none of
  the phase's units is active or enabled. `artifact` sources are skipped (not available
  offline; kdeploy leaves them out of generate-only phases).
- hooks' effects of preinstall: swap.target masked, /etc/kubernetes/pki -> ssl (the
  sysctl values and kernel modules cannot be applied inside an nspawn node: both tools
  restart systemd-sysctl/systemd-modules-load, whose conditions skip them there).
- containerd's socket exists; etcd: `endpoint health` of all members from the first
  node reports every member healthy, and `member list` has one line per member.

Prints one line per mismatch and exits 1 if there is any, else prints a summary.
"""
import argparse
import hashlib
import json
import shlex
import subprocess
import sys

STAGING = {
    "kdeploy": None,  # found on the node: newest generation with the phase
    "ansible": "/var/lib/ansible-staged",
}

_local_cache = {}


def sha_local(path):
    if path not in _local_cache:
        h = hashlib.sha256()
        with open(path, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                h.update(chunk)
        _local_cache[path] = h.hexdigest()
    return _local_cache[path]


def expected_sha(source):
    if "text" in source:
        return hashlib.sha256(source["text"].encode()).hexdigest()
    if "local" in source:
        return sha_local(source["local"])
    return None  # artifact / project file: not used by the lab's activated phases


def q(s):
    return shlex.quote(s)


def node_script(node, tool):
    """Shell script printing one '|'-separated line per fact; the python side compares."""
    lines = ["set +e", "fact() { printf '%s\\n' \"$*\"; }"]
    lines.append(
        "file() { if [ -f \"$2\" ]; then s=$(sha256sum < \"$2\"); st=$(stat -L -c '%a %U %G' \"$2\"); "
        "fact \"F|$1|${s%% *}|$st\"; else fact \"F|$1|-|-\"; fi; }"
    )
    checks = []  # (kind, key, expected)
    for i, ph in enumerate(node["phases"]):
        files = [(f["path"], expected_sha(f["source"]), f["mode"], f["owner"], f["group"]) for f in ph["files"]]
        files += [
            ("/etc/systemd/system/" + u["name"], hashlib.sha256(u["text"].encode()).hexdigest(), "0644", "root", "root")
            for u in ph["units"]
        ]
        if ph["activate"]:
            for path, sha, mode, owner, group in files:
                if sha is None:
                    continue
                key = path
                lines.append(f"file {q(key)} {q(path)}")
                checks.append(("F", key, f"{sha}|{int(mode, 8):o} {owner} {group}"))
            for d in ph["directories"]:
                lines.append(
                    f"if [ -d {q(d['path'])} ]; then fact \"D|{d['path']}|$(stat -c '%a %U %G' {q(d['path'])})\"; "
                    f"else fact \"D|{d['path']}|-\"; fi"
                )
                checks.append(("D", d["path"], f"{int(d['mode'], 8):o} {d['owner']} {d['group']}"))
            for u in ph["units"]:
                if u["enable"]:
                    n = u["name"]
                    lines.append(
                        f"fact \"U|{n}|$(systemctl is-active {q(n)} 2>/dev/null)|$(systemctl is-enabled {q(n)} 2>/dev/null)\""
                    )
                    checks.append(("U", n, "active|enabled"))
        else:
            var = f"ROOT{i}"
            name = ph["name"]
            if tool == "kdeploy":
                lines.append(
                    f"{var}=; best=; for c in /var/lib/kdeploy/generations/*/{name}/.complete; do "
                    f"[ -e \"$c\" ] || continue; n=${{c#/var/lib/kdeploy/generations/}}; n=${{n%%/*}}; "
                    f"if [ -z \"$best\" ] || [ \"$n\" -gt \"$best\" ]; then best=$n; fi; done; "
                    f"[ -n \"$best\" ] && {var}=/var/lib/kdeploy/generations/$best/{name}/files"
                )
            else:
                lines.append(f"{var}={STAGING[tool]}/{name}/files")
            for path, sha, mode, owner, group in files:
                if sha is None:
                    continue
                key = f"staged:{name}:{path}"
                lines.append(f"file {q(key)} \"${var}\"{q(path)}")
                checks.append(("F", key, f"{sha}|{int(mode, 8):o} {owner} {group}"))
                lines.append(f"if [ -e {q(path)} ] || [ -L {q(path)} ]; then fact \"A|{path}|present\"; else fact \"A|{path}|absent\"; fi")
                checks.append(("A", path, "absent"))
            for u in ph["units"]:
                n = u["name"]
                lines.append(
                    f"fact \"N|{n}|$(systemctl is-active {q(n)} 2>/dev/null)|$(systemctl is-enabled {q(n)} 2>/dev/null)\""
                )
                checks.append(("N", n, "not-running"))
    names = [p["name"] for p in node["phases"] if p["activate"]]
    if "preinstall" in names:
        lines.append("fact \"H|swap.target|$(systemctl is-enabled swap.target 2>/dev/null)\"")
        checks.append(("H", "swap.target", "masked"))
        lines.append("fact \"H|pki-link|$(readlink /etc/kubernetes/pki)\"")
        checks.append(("H", "pki-link", "/etc/kubernetes/ssl"))
        # Both tools restart systemd-sysctl.service and systemd-modules-load.service, but
        # inside an nspawn node their conditions skip them (read-only /proc/sys, no module
        # loading), so neither sysctl values nor modules can be checked in the lab.
    if "container-runtime" in names:
        lines.append("if [ -S /run/containerd/containerd.sock ]; then fact 'H|containerd.sock|yes'; else fact 'H|containerd.sock|no'; fi")
        checks.append(("H", "containerd.sock", "yes"))
    return "\n".join(lines) + "\n", checks


def ssh(ssh_config, addr, script):
    r = subprocess.run(
        ["ssh", "-F", ssh_config, addr, "sh -s"], input=script, capture_output=True, text=True, timeout=120
    )
    return r.returncode, r.stdout, r.stderr


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cluster_json")
    ap.add_argument("--tool", choices=sorted(STAGING), required=True)
    ap.add_argument("--ssh-config", required=True)
    a = ap.parse_args()
    cluster = json.load(open(a.cluster_json))
    bad = []
    nchecks = 0
    for name, node in sorted(cluster["nodes"].items()):
        script, checks = node_script(node, a.tool)
        rc, out, err = ssh(a.ssh_config, node["address"], script)
        if rc != 0:
            bad.append(f"{name}: ssh failed ({rc}): {err.strip()}")
            continue
        got = {}
        for line in out.splitlines():
            kind, key, *rest = line.split("|")
            got[(kind, key)] = "|".join(rest)
        for kind, key, want in checks:
            nchecks += 1
            have = got.get((kind, key))
            if kind == "N":
                active, enabled = (have or "|").split("|", 1)
                ok = active != "active" and enabled not in ("enabled", "enabled-runtime")
            else:
                ok = have == want
            if not ok:
                bad.append(f"{name}: {kind} {key}: want {want!r}, got {have!r}")
    # etcd: every member healthy, seen from the first etcd member
    members = [n for n, node in sorted(cluster["nodes"].items()) if "etcd" in node["roles"]]
    if members:
        eps = ",".join(f"https://{cluster['nodes'][m]['address']}:2379" for m in members)
        first = cluster["nodes"][members[0]]["address"]
        # (TLS: the first member's admin client certificate, as both tools place it)
        pki = "/etc/ssl/etcd/ssl"
        tls = f"--cacert={pki}/ca.pem --cert={pki}/admin-{members[0]}.pem --key={pki}/admin-{members[0]}-key.pem"
        ctl = f"/usr/local/bin/etcdctl --endpoints={eps} {tls}"
        rc, out, err = ssh(a.ssh_config, first, f"{ctl} endpoint health 2>&1; {ctl} member list 2>&1")
        healthy = out.count("is healthy")
        started = sum(1 for l in out.splitlines() if ", started, " in l)
        nchecks += 2
        if healthy != len(members):
            bad.append(f"etcd: {healthy}/{len(members)} endpoints healthy: {out.strip()} {err.strip()}")
        if started != len(members):
            bad.append(f"etcd: member list has {started} started members, want {len(members)}: {out.strip()}")
    if bad:
        print(f"verify ({a.tool}): {len(bad)} MISMATCHES of {nchecks} checks:")
        for b in bad:
            print("  " + b)
        sys.exit(1)
    print(f"verify ({a.tool}): all {nchecks} checks passed on {len(cluster['nodes'])} nodes "
          f"(files sha256+mode, dirs, units active+enabled, staged phases, hooks, etcd {len(members)}/{len(members)} healthy)")


if __name__ == "__main__":
    main()
