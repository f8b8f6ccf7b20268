# expect: value is an integer while a Boolean was expected
builtins.partition (x: 1) [ 1 ]
