# expect: infinite recursion encountered
let x = x; in x
