[ (1 < 1.5) (1.5 < 2) (2 > 1.5) (1 <= 1.0) (1.0 >= 1) (-1 < -0.5) (builtins.lessThan 1 1.5) (builtins.lessThan 2.5 2) ]
