[ (import ./lib/relative.nix) (import ./lib/sub/nested.nix) ]
