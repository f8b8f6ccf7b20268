# inherit (e) names does not evaluate the missing or throwing attributes unless needed
let s = { a = 1; b = throw "lazy"; }; r = { inherit (s) a b; inherit (throw "never") c; }; in
[ r.a (builtins.attrNames r) ]
