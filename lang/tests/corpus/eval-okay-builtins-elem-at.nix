let xs = [ "a" "b" "c" ]; in [ (builtins.elemAt xs 0) (builtins.elemAt xs 2) (builtins.elemAt [ [ 1 ] ] 0) ]
