# builtins that are also available without the builtins. prefix
[ (map (x: x) [ 1 ] == builtins.map (x: x) [ 1 ]) (toString 5 == builtins.toString 5) (isNull null)
  (baseNameOf "/a/b" == builtins.baseNameOf "/a/b") (dirOf "/a/b" == builtins.dirOf "/a/b")
  (removeAttrs { a = 1; } [ "a" ] == builtins.removeAttrs { a = 1; } [ "a" ])
  (import ./lib/simple.nix == builtins.import ./lib/simple.nix)
  (fromTOML "a = 1" == builtins.fromTOML "a = 1")
  ((builtins.tryEval (throw "x")) == (builtins.tryEval (builtins.throw "x")))
  (builtins.typeOf abort) (builtins.typeOf builtins.abort) ]
