[ (builtins.filter (x: x > 2) [ 1 2 3 4 ]) (builtins.filter (x: true) [ ]) (builtins.filter (x: false) [ 1 2 ])
  (builtins.filter builtins.isString [ 1 "a" null "b" ]) ]
