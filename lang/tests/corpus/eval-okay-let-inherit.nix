let s = { p = 1; q = 2; }; inherit (s) p q; r = p + q; in [ p q r ]
