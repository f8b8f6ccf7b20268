let a = 1; in let b = a + 1; in let c = a + b; in [ a b c ]
