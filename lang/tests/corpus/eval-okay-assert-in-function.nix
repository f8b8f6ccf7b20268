let f = x: assert x > 0; x * 2; in map f [ 1 2 3 ]
