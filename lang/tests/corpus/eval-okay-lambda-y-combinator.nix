let y = f: (x: f (v: x x v)) (x: f (v: x x v)); fact = y (self: n: if n == 0 then 1 else n * self (n - 1)); in fact 10
