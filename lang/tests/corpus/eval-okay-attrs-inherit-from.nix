let s = { a = 1; b = 2; c = { d = 3; }; }; in { inherit (s) a b; inherit (s.c) d; inherit ({ e = 5; }) e; }
