builtins.length (builtins.genericClosure { startSet = [ { key = 0; } ]; operator = x: if x.key < 2000 then [ { key = x.key + 1; } ] else [ ]; })
