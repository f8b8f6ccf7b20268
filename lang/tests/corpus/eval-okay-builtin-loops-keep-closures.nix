# Builtins that call a function once per element must not let one call's
# variables leak into another's closures or lazy values.
let
  adders = builtins.foldl' (acc: x: acc ++ [ (y: x + y) ]) [ ] [ 1 2 3 ];
  sets = builtins.concatMap (x: [ { v = x; lazy = let z = x * 10; in z; } ]) [ 4 5 6 ];
  kept = builtins.filter (x: x > 1) [ 1 2 3 ];
  grouped = builtins.groupBy (s: if s.v > 4 then "big" else "small") sets;
  sorted = builtins.sort (a: b: a.v > b.v) sets;
  firsts = builtins.partition (x: x != 2) [ 1 2 3 ];
  fns = map (f: f 10) adders;
  curried = builtins.foldl' (acc: x: acc // { "k${toString x}" = (n: n * x); }) { } [ 2 3 ];
in
{
  inherit fns kept grouped sorted firsts;
  calls = builtins.mapAttrs (_: f: f 7) curried;
  all = builtins.all (x: x > 0) [ 1 2 ];
  any = builtins.any (x: x == 3) [ 1 2 ];
}
