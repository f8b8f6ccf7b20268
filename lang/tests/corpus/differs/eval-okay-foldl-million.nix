# foldl' over a million elements runs in constant stack.
builtins.foldl' (a: b: a + b) 0 (builtins.genList (x: x) 1000000)
