let zero = f: x: x; succ = n: f: x: f (n f x); toInt = n: n (x: x + 1) 0; three = succ (succ (succ zero)); in toInt three
