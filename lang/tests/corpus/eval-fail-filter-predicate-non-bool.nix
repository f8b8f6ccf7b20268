# expect: value is a string while a Boolean was expected
builtins.filter (x: "yes") [ 1 ]
