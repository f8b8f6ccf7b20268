let f = n: if n < 0 then "neg" else if n == 0 then "zero" else if n < 10 then "small" else "big"; in
map f [ (-5) 0 5 50 ]
