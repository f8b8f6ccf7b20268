let s = { a = 1; "b c" = 2; }; in
[ (builtins.getAttr "a" s) (builtins.getAttr "b c" s) (builtins.hasAttr "a" s) (builtins.hasAttr "z" s) (builtins.hasAttr "b c" s)
  (builtins.getAttr ("a" + "") s) ]
