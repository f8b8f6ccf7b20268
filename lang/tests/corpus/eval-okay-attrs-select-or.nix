let s = { a = { b = 1; }; c = null; }; in
[ (s.x or "default") (s.a.b or "d") (s.a.x or "d") (s.x.y.z or "deep default") (s.c or "present null")
  (s.a.b.c or "not a set") ({ }.a or 1) (s."a".b or 2) (s.${"a"}.b or 3) ]
