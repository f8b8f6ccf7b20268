# a-b is an identifier, a - b is a subtraction
let a = 10; b = 3; a-b = "ident"; in [ a-b (a - b) (a -b) ]
