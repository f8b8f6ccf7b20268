# expect: stack overflow (possible infinite recursion)
let x = [ x ]; y = [ y ]; in x == y
