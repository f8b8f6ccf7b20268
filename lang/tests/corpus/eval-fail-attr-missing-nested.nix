# expect: attribute 'c' missing
let s = { a.b = 1; }; in s.a.c
