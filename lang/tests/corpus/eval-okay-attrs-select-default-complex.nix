let s = { a = { b = { }; }; }; in [ (s.a.b.c or { d = 1; }).d (s.x or s.a).b (s.a.b or null) ]
