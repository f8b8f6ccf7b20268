let x = 1; f = y: x + y; in let x = 100; in f 1
