let k = a: b: a; in [ (k 1 2) ((k 1) 2) (k (k 3 4) 5) ]
