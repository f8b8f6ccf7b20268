let s = { a = 1; b = 2; }; sum = with s; a + b; in sum
