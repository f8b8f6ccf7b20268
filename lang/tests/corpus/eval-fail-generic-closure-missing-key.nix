# expect: attribute 'key' required
builtins.genericClosure { startSet = [ { } ]; operator = x: [ ]; }
