# expect: stack overflow (possible infinite recursion)
let x = [ x ]; in builtins.toJSON x
