# expect: stack overflow (possible infinite recursion)
let s = { outPath = s; }; in "${s}"
