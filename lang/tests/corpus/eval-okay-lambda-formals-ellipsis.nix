let f = { a, ... }: a; in [ (f { a = 1; }) (f { a = 2; b = 3; c = throw "not evaluated"; }) ]
