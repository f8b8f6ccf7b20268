# A long string built with concatStringsSep and interpolation: 300000 pieces
# ("item-<i>;"), joined with "," into a ~3.8 MB string, then a 4 MiB string by
# repeated doubling (s + s, 18 times). Result: total length.
# expect: 7983193
let
  n = 300000;
  joined = builtins.concatStringsSep "," (builtins.genList (i: "item-${toString i};") n);
  doubled = builtins.foldl' (s: _: s + s) "0123456789abcdef" (builtins.genList (i: i) 18);
in
builtins.stringLength joined + builtins.stringLength doubled
