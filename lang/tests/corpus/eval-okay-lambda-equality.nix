# functions are never equal to anything when compared directly
let f = x: x; in [ (f == f) ((x: x) == (x: x)) (f != f) (map == map) (f == 1) ]
