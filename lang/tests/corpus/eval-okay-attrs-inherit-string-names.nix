# inherit also accepts quoted and (constant) interpolated names
let a = 1; b = 2; s = { "x y" = 3; }; in { inherit "a"; inherit ${"b"}; inherit (s) "x y"; }
