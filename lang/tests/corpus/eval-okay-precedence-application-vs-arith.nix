let f = x: x * 2; in [ (f 2 + 1) (f (2 + 1)) (-f 2) ]
