# expect: infinite recursion encountered
let s = s // { a = 1; }; in s.a
