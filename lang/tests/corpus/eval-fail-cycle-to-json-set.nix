# expect: stack overflow (possible infinite recursion)
let x = { a = x; }; in builtins.toJSON x
