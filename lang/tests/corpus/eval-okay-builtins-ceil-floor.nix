[ (builtins.ceil 0.5) (builtins.ceil (-0.5)) (builtins.floor 0.5) (builtins.floor (-0.5)) (builtins.ceil 3) (builtins.floor 2.9999)
  (builtins.ceil 1.0e10) (builtins.floor (-1.0e10)) ]
