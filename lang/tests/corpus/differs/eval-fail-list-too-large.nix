# kdeploy::too-large: a list may hold at most 16777216 elements; Nix makes this one.
builtins.length (builtins.genList (x: x) 20000000)
