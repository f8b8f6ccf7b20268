# No store: Nix copies the filtered directory to the store; kdeploy refuses (kdeploy::not-supported).
builtins.filterSource (path: type: true) ../lib
