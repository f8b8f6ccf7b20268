# A 200000-attribute set built with listToAttrs, then read back twice: the sum
# of attrValues, and the sum of s.${name} over attrNames (200000 lookups).
# expect: 39999800000
let
  n = 200000;
  s = builtins.listToAttrs (builtins.genList (i: { name = "attr${toString i}"; value = i; }) n);
  sumValues = builtins.foldl' (a: b: a + b) 0 (builtins.attrValues s);
  sumLookups = builtins.foldl' (a: k: a + s.${k}) 0 (builtins.attrNames s);
in
sumValues + sumLookups
