let s = { a = { b = { c = "deep"; }; }; "x y" = 1; n = 5; }; k = "n"; in
[ s.a.b.c s."x y" s.${k} s.a.${"b"}.c (s.a).b.c ]
