#!/usr/bin/env bash
# Runs every test of the project: unit tests, the language corpus, the
# differential tests against real Nix (corpus and example clusters), error
# snapshots, then the stdlib's own checks (validation rules, golden closures,
# a real 3-member etcd started from generated files).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test --workspace --release
sh tests/stdlib/run.sh
