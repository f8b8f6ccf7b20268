# builtins.toJSON on floats, Nix 2.8 formatting; see DIFFERENCES.md
[ (builtins.toJSON 1.5) (builtins.toJSON 1.0) (builtins.toJSON (0.1 + 0.2)) (builtins.toJSON (1 / 3.0))
  (builtins.toJSON 1.0e21) (builtins.toJSON 1234567.0) (builtins.toJSON [ 0.5 2.0 ]) ]
