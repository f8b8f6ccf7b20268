# The first accumulator reaches the function unforced: a step that ignores
# it never evaluates it, so the throw below is never raised.
let
  last = builtins.foldl' (_acc: x: x) (throw "initial accumulator") [ 7 3 42 ];
  # the accumulator is only forced once a step returns it
  counted = builtins.foldl' (acc: x: if x == 0 then 0 else acc + x) (abort "unused") [ 0 5 6 ];
in
[ last counted ]
