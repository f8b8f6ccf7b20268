builtins.length (map (x: throw "not forced") [ 1 2 3 ])
