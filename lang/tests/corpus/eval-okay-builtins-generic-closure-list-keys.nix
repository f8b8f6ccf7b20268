builtins.genericClosure { startSet = [ { key = [ 1 ]; } ]; operator = x: if builtins.length x.key < 3 then [ { key = x.key ++ [ 1 ]; } { key = [ 1 ]; } ] else [ ]; }
