# Reproducibility: Nix gives the evaluating machine's platform ("x86_64-linux"); kdeploy refuses (kdeploy::not-supported), so a cluster evaluates alike on every deployer.
assert builtins ? currentSystem;
builtins.currentSystem
