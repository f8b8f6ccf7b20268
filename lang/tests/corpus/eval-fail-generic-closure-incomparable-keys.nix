# expect: cannot compare
builtins.genericClosure { startSet = [ { key = 1; } { key = "a"; } ]; operator = x: [ ]; }
