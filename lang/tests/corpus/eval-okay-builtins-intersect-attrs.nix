[ (builtins.intersectAttrs { a = 0; b = 0; } { b = 2; c = 3; }) (builtins.intersectAttrs { } { a = 1; }) (builtins.intersectAttrs { a = 1; } { })
  (builtins.intersectAttrs { x = throw "values of the first set are ignored"; } { x = "second"; }) ]
