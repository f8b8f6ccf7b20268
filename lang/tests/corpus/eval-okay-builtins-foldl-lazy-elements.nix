# foldl' forces the accumulator but not the list elements
builtins.foldl' (acc: x: acc + 1) 0 [ (throw "a") (throw "b") ]
