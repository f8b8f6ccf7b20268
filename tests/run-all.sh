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
# The end-to-end tests need real nodes: a Kubernetes-capable lab of 8 nspawn
# nodes at 10.77.0.11-18 (the etcd-only lab tests use the first 3, the etcd
# 3 -> 5 -> 3 test the first five, tests/kubernetes_lab.rs the last three),
# booted unless it is up already, and removed afterwards if we booted it.
# Kubernetes (1.34.4, and 1.35.4 for the upgrade test), etcd, CoreDNS, flannel
# for the lab are built from their Go modules once (cached by version), their
# images pushed to the lab registry.
lab_env=${KDEPLOY_LAB_DIR:-.lab}/lab.env
if ! { lab/lab.sh status >/dev/null 2>&1 && grep -qx 'K8S=1' "$lab_env" && grep -qx 'N=8' "$lab_env"; }; then
  lab/lab.sh up 8 --k8s
  trap 'lab/lab.sh down' EXIT
fi
lab/build-k8s.sh
lab/images.sh push 10.77.0.1:5000
# the version the upgrade test goes to (tests/kubernetes_lab.rs)
KDEPLOY_K8S_VERSION=1.35.4 lab/build-k8s.sh kubernetes
KDEPLOY_K8S_VERSION=1.35.4 lab/images.sh push 10.77.0.1:5000
# The `ci` profile (Cargo.toml): release optimisation without LTO or debug
# info, so the 30-odd test binaries link in minutes.
# (every test binary runs even after one failed: the run reports them all)
cargo test --workspace --profile ci --no-fail-fast
# The parser and evaluator fuzz (proptest over generated text and programs)
# once more with many cases: 5000 of each, about ten seconds.
KDEPLOY_FUZZ_CASES=5000 cargo test --profile ci -p kdeploy-lang --test fuzz
# Real Nix must still agree with the corpus's expectations (CI installs nix-bin).
if command -v nix-instantiate >/dev/null; then
  env -i PATH="$PATH" HOME=/tmp/nixhome tests/lang/regen.sh --check
fi
KDEPLOY=target/ci/kdeploy sh tests/stdlib/run.sh
