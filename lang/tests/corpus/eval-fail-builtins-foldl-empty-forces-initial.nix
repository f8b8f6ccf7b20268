# expect: initial accumulator of an empty fold
builtins.foldl' (acc: x: acc + x) (throw "initial accumulator of an empty fold") [ ]
