# expect: value is an integer while a list was expected
builtins.genericClosure { startSet = [ { key = 1; } ]; operator = x: 1; }
