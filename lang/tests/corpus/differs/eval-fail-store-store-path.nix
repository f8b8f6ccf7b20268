# No store: Nix takes the path as a store path (with the store path as its context); kdeploy refuses (kdeploy::not-supported).
builtins.storePath "/nix/store/00000000000000000000000000000000-missing"
