# expect: value is an integer while a set was expected
builtins.getAttr "x" 1
