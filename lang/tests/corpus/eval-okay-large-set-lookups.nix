# Lookups in sets large enough to be indexed by hash, directly, through a
# `//` overlay, after an update, and for names that are missing.
let
  big = builtins.listToAttrs (builtins.genList (i: { name = "k${toString i}"; value = i; }) 500);
  over = big // { k7 = "seven"; extra = true; };
  updated = builtins.removeAttrs over [ "k1" "k499" ];
  sum = builtins.foldl' (a: n: a + big.${n}) 0 (builtins.attrNames big);
in
[
  sum
  big.k0
  big.k499
  (big.k500 or "missing")
  (big ? k250)
  (big ? "")
  over.k7
  over.k8
  over.extra
  (updated ? k1)
  (updated ? k2)
  (builtins.length (builtins.attrNames updated))
  (builtins.hasAttr "k498" updated)
  (builtins.getAttr "k123" big)
]
