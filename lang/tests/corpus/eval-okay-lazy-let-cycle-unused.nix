let x = x; y = 1; in y
