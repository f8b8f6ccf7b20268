let xs = builtins.genList (i: i * 2) 100000; in [ (builtins.length xs) (builtins.elemAt xs 99999) (builtins.head xs) ]
