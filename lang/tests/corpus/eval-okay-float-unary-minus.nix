let x = 2.5; in [ (-x) (- x) (0 - x) (-x == -2.5) (builtins.typeOf (-x)) ]
