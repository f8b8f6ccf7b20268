# sums that are exact in binary floating point
builtins.foldl' builtins.add 0.0 [ 0.5 0.25 0.125 0.0625 ]
