let s = { good = 1; bad = throw "bad"; }; in [ (builtins.tryEval s.good) (builtins.tryEval s.bad) ]
