# `//` in a loop: foldl' over 20000 small (3-attribute) sets, each merged into
# the accumulator with `//`. Keys repeat modulo 1000/2000, so the accumulator
# grows to ~3000 attributes and every `//` copies it.
# Result: number of attributes and sum of the final values.
# expect: {"count":3001,"sum":95517499}
let
  sets = builtins.genList (i: {
    "k${toString (i - (i / 1000) * 1000)}" = i;
    "j${toString (i - (i / 2000) * 2000)}" = 2 * i;
    last = i;
  }) 20000;
  merged = builtins.foldl' (acc: s: acc // s) { } sets;
in
{
  count = builtins.length (builtins.attrNames merged);
  sum = builtins.foldl' (a: b: a + b) 0 (builtins.attrValues merged);
}
