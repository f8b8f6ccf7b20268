let s = { a = 1; b = throw "b is never forced"; c = abort "c is never forced"; }; in [ s.a (builtins.attrNames s) (builtins.length (builtins.attrValues s)) ]
