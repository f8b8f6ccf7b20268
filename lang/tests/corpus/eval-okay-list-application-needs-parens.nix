let f = x: x * 10; in map builtins.typeOf [ (f 1) f 2 ]
