let compose = f: g: x: f (g x); inc = x: x + 1; dbl = x: x * 2; in [ (compose inc dbl 5) (compose dbl inc 5) ]
