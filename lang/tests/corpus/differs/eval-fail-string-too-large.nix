# kdeploy::too-large: a string may hold at most 256 MiB; Nix builds this 299 MiB one.
let mib = builtins.foldl' (s: _: s + s) "x" (builtins.genList (x: x) 20);
in builtins.stringLength (builtins.concatStringsSep mib (builtins.genList (x: "") 300))
