# expect: stack overflow
let f = x: f x; in f 1
