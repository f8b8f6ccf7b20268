#!/usr/bin/env bash
# Regenerate the expected outputs of the Nix language conformance corpus with
# real Nix (2.8) and check that every eval-fail / parse-fail case really fails.
#
#   lang/tests/corpus/regen.sh           regenerate every eval-okay-*.exp, verify the rest
#   lang/tests/corpus/regen.sh --check   only compare, never write; non-zero exit on any mismatch
#
# Environment: NIX_INSTANTIATE (default: nix-instantiate); set REGEN_ANY_NIX=1 to
# allow a Nix other than 2.8.x (the committed .exp files come from 2.8.0).
# Nix runs with an empty environment (no NIX_PATH, a private HOME, an empty
# NIX_CONF_DIR) so no user or system configuration leaks into the results.
set -u
here=$(cd "$(dirname "$0")" && pwd)
cd "$here" || exit 2

check_only=0
case "${1:-}" in
  --check) check_only=1 ;;
  "") ;;
  *) echo "usage: $0 [--check]" >&2; exit 2 ;;
esac

NIX_INSTANTIATE=${NIX_INSTANTIATE:-nix-instantiate}
nix_bin=$(command -v "$NIX_INSTANTIATE") || { echo "regen: $NIX_INSTANTIATE not found" >&2; exit 2; }

tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/home" "$tmp/conf"

# Address space capped at 4 GiB: the corpus's "out of memory" cases must fail
# in Nix's allocator, not depend on the host's overcommit policy (the
# Kubernetes lab's kubelet sets vm.overcommit_memory=1, under which Nix's 80 GB
# genList succeeds and the kernel's OOM killer ends Nix, or something else).
nix() {
  ( ulimit -v 4194304
    env -i PATH="$PATH" HOME="$tmp/home" NIX_CONF_DIR="$tmp/conf" \
      timeout 300 "$nix_bin" --readonly-mode "$@" )
}

version=$(nix --version 2>/dev/null)
case "$version" in
  *" 2.8."*) ;;
  *)
    if [ "${REGEN_ANY_NIX:-}" != 1 ]; then
      echo "regen: expected Nix 2.8.x, found '$version' (set REGEN_ANY_NIX=1 to continue)" >&2
      exit 2
    fi ;;
esac
echo "regen: using $version"

# drop ANSI colours and the source excerpts Nix prints ("  12| code"), which
# would otherwise contain the "# expect:" line itself
clean_err() { sed -e 's/\x1b\[[0-9;]*m//g' | grep -v -E '^ *[0-9]*\|'; }

n_ok=0 n_fail=0 n_parse=0 n_changed=0 problems=0
problem() { echo "PROBLEM: $*"; problems=$((problems + 1)); }

for f in eval-okay-*.nix; do
  [ -e "$f" ] || continue
  n_ok=$((n_ok + 1))
  exp=${f%.nix}.exp
  # eval-okay-print-* are about the printed form: Nix's output without --json
  json=--json
  case $f in eval-okay-print-*) json= ;; esac
  if ! nix --eval --strict $json "$f" >"$tmp/out" 2>"$tmp/err"; then
    problem "$f: Nix failed to evaluate it:"; clean_err <"$tmp/err" | head -5 | sed 's/^/    /'
    continue
  fi
  if [ -e "$exp" ] && cmp -s "$tmp/out" "$exp"; then continue; fi
  if [ "$check_only" = 1 ]; then
    problem "$exp: differs from Nix output"
  else
    cp "$tmp/out" "$exp"
    echo "wrote $exp"
    n_changed=$((n_changed + 1))
  fi
done

for e in eval-okay-*.exp; do
  [ -e "$e" ] || continue
  [ -e "${e%.exp}.nix" ] || problem "$e: no matching .nix file"
done

expect_of() { sed -n '1s/^# expect: //p' "$1"; }

for f in eval-fail-*.nix; do
  [ -e "$f" ] || continue
  n_fail=$((n_fail + 1))
  want=$(expect_of "$f")
  [ -n "$want" ] || problem "$f: first line must be '# expect: <description>'"
  if nix --eval --strict --json "$f" >"$tmp/out" 2>"$tmp/err"; then
    problem "$f: Nix evaluated it successfully (output: $(head -c 200 "$tmp/out"))"
    continue
  fi
  clean_err <"$tmp/err" >"$tmp/err.txt"
  if [ -n "$want" ] && ! grep -qF -- "$want" "$tmp/err.txt"; then
    problem "$f: Nix's error does not contain '$want':"; head -3 "$tmp/err.txt" | sed 's/^/    /'
  fi
done

for f in parse-fail-*.nix; do
  [ -e "$f" ] || continue
  n_parse=$((n_parse + 1))
  want=$(expect_of "$f")
  [ -n "$want" ] || problem "$f: first line must be '# expect: <description>'"
  if nix --parse "$f" >"$tmp/out" 2>"$tmp/err"; then
    problem "$f: Nix parsed it successfully"
    continue
  fi
  clean_err <"$tmp/err" >"$tmp/err.txt"
  if [ -n "$want" ] && ! grep -qF -- "$want" "$tmp/err.txt"; then
    problem "$f: Nix's error does not contain '$want':"; head -3 "$tmp/err.txt" | sed 's/^/    /'
  fi
done

echo "regen: $n_ok eval-okay ($n_changed .exp written), $n_fail eval-fail, $n_parse parse-fail, $problems problem(s)"
[ "$problems" = 0 ]
