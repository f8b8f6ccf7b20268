[ (builtins.any (x: x == 1) [ 1 (throw "not forced") ]) (builtins.all (x: x == 1) [ 2 (throw "not forced") ]) ]
