let f = x: x; in [ (-f 2) (f (-2)) (- (f 3)) ]
