# expect: attempt to call something which is not a function but a string
builtins.mapAttrs (x: x) { a = 1; }
