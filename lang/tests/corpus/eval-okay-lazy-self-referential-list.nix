let xs = [ 1 (builtins.elemAt xs 0 + 1) ]; in xs
