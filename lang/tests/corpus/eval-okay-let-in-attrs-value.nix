{ a = let x = 5; in x * x; b = let in 1; }
