[ (builtins.elem 2 [ 1 2 3 ]) (builtins.elem 4 [ 1 2 3 ]) (builtins.elem 1 [ ]) (builtins.elem [ 1 ] [ [ 1 ] [ 2 ] ])
  (builtins.elem { a = 1; } [ { a = 1; } ]) (builtins.elem 1 [ 1.0 ]) (builtins.elem "a" [ "b" "a" ]) (builtins.elem null [ null ]) ]
