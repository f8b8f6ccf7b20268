# expect: value is an integer while a set was expected
builtins.catAttrs "a" [ 1 ]
