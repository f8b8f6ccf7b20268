[ (builtins.typeOf (1 + 0.5)) (builtins.typeOf (1.5 + 1)) (builtins.typeOf (2 * 1.0))
  (builtins.typeOf (4 / 2.0)) (builtins.typeOf (4 / 2)) (builtins.typeOf 1.0)
  (builtins.isFloat 2.5) (builtins.isFloat 2) ]
