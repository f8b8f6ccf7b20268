let f = { a, b }: a + b; in [ (f { a = 1; b = 2; }) (f { b = 10; a = 5; }) ]
