rec { a.b = 1; a.c = a.b + 1; d = a.c; }
