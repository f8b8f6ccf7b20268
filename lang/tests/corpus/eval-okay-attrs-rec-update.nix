let base = rec { a = 1; b = a + 1; }; in base // { a = 10; }
