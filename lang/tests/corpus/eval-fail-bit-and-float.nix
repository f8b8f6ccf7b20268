# expect: value is a float while an integer was expected
builtins.bitAnd 1.5 1
