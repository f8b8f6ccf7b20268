[ (builtins.concatMap (x: [ x x ]) [ 1 2 ]) (builtins.concatMap (x: [ ]) [ 1 2 ]) (builtins.concatMap (x: x) [ [ 1 ] [ 2 3 ] ])
  (builtins.concatMap (x: [ x ]) [ ]) ]
