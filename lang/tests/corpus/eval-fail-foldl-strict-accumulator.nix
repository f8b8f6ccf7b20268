# expect: accumulator forced
builtins.foldl' (acc: x: throw "accumulator forced") 0 [ 1 ]
