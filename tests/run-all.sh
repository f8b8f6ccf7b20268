#!/usr/bin/env bash
# Runs every test of the project: unit tests, the language corpus, the
# differential tests against real Nix (corpus and example clusters), error
# snapshots, then the stdlib's own checks (validation rules, golden closures,
# a real 3-member etcd started from generated files).
set -euo pipefail
cd "$(dirname "$0")/.."
# Whoever runs this, a lab test that cannot reach the lab fails instead of
# returning early as "ok" (tests/node_support: lab_up()).
export CI=1
# The end-to-end tests need real nodes: boot the lab (5 nspawn nodes at
# 10.77.0.11-15; the example lab cluster uses the first 3, the etcd 3 -> 5
# -> 3 test all five) unless it is up already, and remove it afterwards if
# we booted it.
if ! lab/lab.sh status >/dev/null 2>&1; then
  lab/lab.sh up 5
  trap 'lab/lab.sh down' EXIT
fi
# The `ci` profile (Cargo.toml): release optimisation without LTO or debug
# info, so the 30-odd test binaries link in minutes.
cargo test --workspace --profile ci
# The parser and evaluator fuzz (proptest over generated text and programs)
# once more with many cases: 5000 of each, about ten seconds.
KDEPLOY_FUZZ_CASES=5000 cargo test --profile ci -p kdeploy-lang --test fuzz
# Real Nix must still agree with the corpus's expectations (CI installs nix-bin).
if command -v nix-instantiate >/dev/null; then
  env -i PATH="$PATH" HOME=/tmp/nixhome tests/lang/regen.sh --check
fi
KDEPLOY=target/ci/kdeploy sh tests/stdlib/run.sh
