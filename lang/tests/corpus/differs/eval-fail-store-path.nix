# No store: Nix copies the directory to the store and gives its path; kdeploy refuses (kdeploy::not-supported).
builtins.path { path = ../lib; name = "lib"; }
