# Deep non-tail recursion: `1 + f (n - 1)` keeps every frame alive until the
# bottom is reached. Depth 60000 is ~80% of the deepest Nix 2.8 survives with
# the default 8 MiB stack (bisected: 73437 passes, ~74000 overflows); the
# descent is repeated 10 times so the timing is not dominated by start-up.
# expect: 600000
let
  depth = 60000;
  f = n: if n == 0 then 0 else 1 + f (n - 1);
in
builtins.foldl' (acc: _: acc + f depth) 0 (builtins.genList (i: i) 10)
