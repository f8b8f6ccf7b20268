# expect: value is an integer while a string was expected
builtins.groupBy (x: 1) [ 1 ]
