let f = x: { a = x; }; in [ (f 1).a ((x: { b = x; }) 2).b ]
