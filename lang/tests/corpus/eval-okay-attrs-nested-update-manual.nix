let s = { a = { x = 1; y = 2; }; }; in s // { a = s.a // { y = 20; z = 30; }; }
