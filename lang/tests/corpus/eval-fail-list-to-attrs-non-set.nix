# expect: value is an integer while a set was expected
builtins.listToAttrs [ 1 ]
