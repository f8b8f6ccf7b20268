[ (removeAttrs { a = 1; b = 2; c = 3; } [ "a" "c" ]) (removeAttrs { a = 1; } [ "missing" ]) (builtins.removeAttrs { } [ ])
  (removeAttrs { a = 1; } [ "a" "a" ]) ]
