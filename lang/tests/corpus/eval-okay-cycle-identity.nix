# Cyclic values compared with themselves, or forced deeply: Nix answers
# (equality by identity, deepSeq visits each value once), so must kdeploy.
let
  x = { a = x; };
  l = [ l ];
in
[ (x == x) (l < l) (l == l) (x.a.a == x) (builtins.deepSeq x 1) (builtins.deepSeq l 2) (builtins.length l) ]
