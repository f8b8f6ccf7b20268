# expect: out of memory
builtins.length (builtins.genList (x: x) 10000000000)
