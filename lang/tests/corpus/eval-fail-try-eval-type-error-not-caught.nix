# expect: cannot add a string to an integer
builtins.tryEval (1 + "a")
