# expect: stack overflow (possible infinite recursion)
let s = { __toString = self: self; }; in "${s}"
