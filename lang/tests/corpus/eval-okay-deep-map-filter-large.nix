let xs = builtins.genList (i: i) 50000; in builtins.length (builtins.filter (x: builtins.bitAnd x 1 == 0) (map (x: x * 3) xs))
