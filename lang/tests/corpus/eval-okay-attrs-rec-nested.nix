rec { a = 1; b = { c = a + 1; d = rec { e = c0 + a; c0 = 10; }; }; }
