# No store: Nix gives its store's directory ("/nix/store"); kdeploy refuses (kdeploy::not-supported).
"${builtins.storeDir}/x"
