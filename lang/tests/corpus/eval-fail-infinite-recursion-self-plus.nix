# expect: infinite recursion encountered
let x = x + 1; in x
