# `or` is a keyword, but Nix 2.8 also accepts it as an attribute name and, in
# argument position, as a variable reference
let s = { or = 1; a.or = 2; }; in
[ s.or s.a.or (with { or = "from with"; }; (x: x) or) { inherit ({ or = 3; }) or; } { or.b = 4; } ]
