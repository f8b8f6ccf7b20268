let { a = 1; b = { c = a + 1; }; body = b.c; }
