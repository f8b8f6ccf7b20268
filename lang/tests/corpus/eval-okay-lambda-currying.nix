let add3 = a: b: c: a + b + c; add1 = add3 1; add12 = add1 2; in [ (add12 3) (add3 1 2 3) (map (add3 0 0) [ 1 2 ]) ]
