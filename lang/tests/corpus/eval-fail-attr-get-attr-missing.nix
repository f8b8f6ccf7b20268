# expect: attribute 'b' missing
builtins.getAttr "b" { a = 1; }
