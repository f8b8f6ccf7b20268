# expect: stack overflow (possible infinite recursion)
# --strict --json prints the value: a set inside itself never ends.
let x = { a = { b = x; }; }; in x
