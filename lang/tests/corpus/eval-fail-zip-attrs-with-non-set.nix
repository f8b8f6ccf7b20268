# expect: value is an integer while a set was expected
builtins.zipAttrsWith (n: v: v) [ 1 ]
