# expect: value is an integer while a Boolean was expected
builtins.sort (a: b: 1) [ 2 1 ]
