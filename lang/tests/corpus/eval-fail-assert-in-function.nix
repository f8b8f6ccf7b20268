# expect: assertion '(__lessThan 0 x)' failed
let f = x: assert x > 0; x; in f (-1)
