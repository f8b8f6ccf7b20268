let f = { a, b ? 10, c ? "c" }: [ a b c ]; in [ (f { a = 1; }) (f { a = 1; b = 2; }) (f { a = 1; c = null; }) ]
