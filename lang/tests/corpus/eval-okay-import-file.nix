[ (import ./lib/simple.nix) (import ./lib/attrs.nix) (builtins.import ./lib/list.nix) ]
