# expect: cannot create list of size -1
builtins.genList (x: x) (-1)
