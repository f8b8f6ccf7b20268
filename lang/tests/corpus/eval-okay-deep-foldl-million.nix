builtins.foldl' (acc: x: acc + x) 0 (builtins.genList (i: i) 1000000)
