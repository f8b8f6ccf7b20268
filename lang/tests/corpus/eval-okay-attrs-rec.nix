rec { a = 1; b = a + 1; c = b * 10; d = [ a b c ]; }
