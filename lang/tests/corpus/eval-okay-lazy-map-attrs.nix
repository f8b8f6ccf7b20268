(builtins.mapAttrs (n: v: throw "not forced") { a = 1; b = 2; }) ? a
