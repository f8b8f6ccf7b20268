let f = { a, b ? a * 2, c ? b + 1 }: [ a b c ]; in [ (f { a = 1; }) (f { a = 1; b = 5; }) (f { a = 1; c = 0; }) ]
