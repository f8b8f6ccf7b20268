#!/bin/sh
# Regenerate stdlib/OPTIONS.md from kd.options (every option, its type, default,
# scope, the Kubespray variable it mirrors, and its description).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
env -i PATH="$PATH" HOME="${TMPDIR:-/tmp}" nix-instantiate --eval --strict --json -I kdeploy="$root/stdlib" \
  -E '(import <kdeploy>).options' | python3 -c '
import json, sys
opts = json.load(sys.stdin)
print("# kdeploy options")
print()
print("Generated from `kd.options` by tests/stdlib/gen-options-doc.sh; do not edit by hand.")
print("Scope \"cluster\": only in `settings`; scope \"node\": also in `roleSettings.<role>` and")
print("`nodes.<name>.settings`.")
print()
group = None
for o in opts:
    g = o["path"].split(".")[0]
    if g != group:
        group = g
        print(f"\n## {g}\n")
        print("| option | type | default | scope | Kubespray | description |")
        print("|---|---|---|---|---|---|")
    d = json.dumps(o["default"])
    if len(d) > 60: d = d[:57] + "..."
    cell = lambda s: str(s).replace("|", "\\|").replace("\n", " ")
    row = ["`" + o["path"] + "`", cell(o["type"]), "`" + cell(d) + "`", o["scope"], cell(o["kubespray"] or ""), cell(o["description"])]
    print("| " + " | ".join(row) + " |")
' > "$root/stdlib/OPTIONS.md"
echo "wrote stdlib/OPTIONS.md"
