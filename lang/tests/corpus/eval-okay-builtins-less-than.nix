[ (builtins.lessThan 1 2) (builtins.lessThan 2 1) (builtins.lessThan 1 1) (builtins.lessThan "a" "b") (builtins.lessThan 1.5 2)
  (builtins.lessThan [ 1 ] [ 2 ]) ]
