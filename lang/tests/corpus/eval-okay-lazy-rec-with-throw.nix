(rec { a = 1; b = throw "unused"; c = a + 1; }).c
