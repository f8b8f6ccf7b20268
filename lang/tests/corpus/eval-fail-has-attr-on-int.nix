# expect: value is an integer while a set was expected
builtins.hasAttr "x" 1
