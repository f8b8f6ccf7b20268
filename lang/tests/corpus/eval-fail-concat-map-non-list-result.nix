# expect: value is an integer while a list was expected
builtins.concatMap (x: x) [ 1 ]
