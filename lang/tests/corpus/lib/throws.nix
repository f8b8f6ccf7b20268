throw "lib/throws.nix was forced"
