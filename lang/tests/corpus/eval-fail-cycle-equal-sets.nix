# expect: stack overflow (possible infinite recursion)
let x = { a = x; }; y = { a = y; }; in x == y
