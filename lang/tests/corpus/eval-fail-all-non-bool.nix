# expect: value is an integer while a Boolean was expected
builtins.all (x: 1) [ 1 ]
