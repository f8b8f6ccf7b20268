[ (import ./lib/attrs.nix == import ./lib/attrs.nix) ((import ./lib/attrs.nix).y) ]
