{ a = 1; b = "two"; c = [ 3 ]; d = { e = null; }; }
