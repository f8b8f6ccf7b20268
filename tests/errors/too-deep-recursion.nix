# Unbounded recursion: f never stops calling itself.
let
  f = x: 1 + f x;
in
f 0
