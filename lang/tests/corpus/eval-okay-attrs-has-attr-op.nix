let s = { a = { b = { c = 1; }; }; d = null; "e f" = 1; }; in
[ (s ? a) (s ? x) (s ? a.b) (s ? a.b.c) (s ? a.b.x) (s ? a.x.y) (s ? d) (s ? "e f") (s ? ${"a"})
  (s ? d.x) (1 ? a) ("s" ? a) ({ } ? a) ]
