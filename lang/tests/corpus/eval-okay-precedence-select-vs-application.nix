# selection binds tighter than application: f s.a is f (s.a)
let f = x: x * 2; s = { a = 21; }; in f s.a
