# No store: Nix instantiates the derivation and prints its store paths; kdeploy refuses (kdeploy::not-supported).
(derivation { name = "x"; system = "x86_64-linux"; builder = "/bin/sh"; }).outPath
