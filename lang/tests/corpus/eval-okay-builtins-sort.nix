[ (builtins.sort builtins.lessThan [ 3 1 2 ]) (builtins.sort (a: b: a > b) [ 3 1 2 ]) (builtins.sort builtins.lessThan [ ])
  (builtins.sort builtins.lessThan [ "b" "a" "C" ]) (builtins.sort (a: b: a < b) [ 1.5 1 (-2) ]) ]
