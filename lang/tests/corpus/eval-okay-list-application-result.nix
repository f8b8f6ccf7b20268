let f = x: x * 10; in builtins.length [ (f 1) f 2 ]
