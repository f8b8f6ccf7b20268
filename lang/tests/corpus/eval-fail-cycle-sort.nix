# expect: stack overflow (possible infinite recursion)
let x = [ x ]; y = [ y ]; in builtins.sort builtins.lessThan [ x y ]
