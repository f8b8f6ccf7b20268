# expect: infinite recursion encountered
let x = { a = x.a; }; in x.a
