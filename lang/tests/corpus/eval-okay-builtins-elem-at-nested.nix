builtins.elemAt (builtins.elemAt [ [ 1 2 ] [ 3 4 ] ] 1) 0
