builtins.genericClosure { startSet = [ ]; operator = x: throw "not called"; }
