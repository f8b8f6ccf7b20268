# expect: value is an integer while a set was expected
builtins.attrValues 1
