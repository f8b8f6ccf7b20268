#!/bin/bash
# push-times.sh KD...: per binary, 3 warm first converges on the 3-node lab; print each node's push line
cd /work/bench-tree || exit 1
A=(--ssh-key .lab/id_ed25519 --known-hosts .lab/known_hosts)
lab/lab.sh up 3 >/dev/null
for KD in "$@"; do $KD switch ${CLUSTER:-/work/notes/lab.nix} "${A[@]}" >/dev/null 2>&1; $KD reset ${CLUSTER:-/work/notes/lab.nix} --yes "${A[@]}" >/dev/null 2>&1; done
for i in 1 2 3; do
 for KD in "$@"; do
  $KD switch ${CLUSTER:-/work/notes/lab.nix} "${A[@]}" > /dev/null 2>/tmp/pt.err
  echo "$(basename $KD) run $i: $(grep -E 'pushed|hold their' /tmp/pt.err | sed 's/pushed \([0-9]*\) blob(s).* in /\1 blobs /' | tr '\n' ' ')"
  $KD reset ${CLUSTER:-/work/notes/lab.nix} --yes "${A[@]}" >/dev/null 2>&1
 done
done
lab/lab.sh down >/dev/null
