# plain sets with outPath compare structurally; sets with type = "derivation"
# compare by outPath only (Nix 2.8)
[ ({ outPath = "p"; a = 1; } == { outPath = "p"; a = 2; }) ({ outPath = "p"; } == { outPath = "q"; })
  ({ type = "derivation"; outPath = "p"; a = 1; } == { type = "derivation"; outPath = "p"; a = 2; })
  ({ type = "derivation"; outPath = "p"; } == { type = "derivation"; outPath = "q"; }) ]
