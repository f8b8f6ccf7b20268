# expect: out of memory
builtins.genList (x: x) 100000000000000000
