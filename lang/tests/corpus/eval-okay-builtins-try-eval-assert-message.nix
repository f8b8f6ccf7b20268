(builtins.tryEval (let x = 1; in assert x == 2; x)).success
