let r = builtins.tryEval { a = 1; }; in [ r.success r.value.a (builtins.attrNames r) ]
