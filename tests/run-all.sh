#!/usr/bin/env bash
# Runs every test of the project: unit tests, the language corpus, the
# differential test against real Nix, error snapshots, stdlib checks.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test --workspace --release
