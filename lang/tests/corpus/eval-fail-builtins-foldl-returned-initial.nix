# expect: returned initial accumulator
# A step that returns the accumulator forces it: the result of every step is a value.
builtins.foldl' (acc: x: acc) (throw "returned initial accumulator") [ 1 2 ]
