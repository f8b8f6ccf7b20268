[ (baseNameOf (dirOf ./lib/data.txt)) (builtins.typeOf (dirOf ./lib/data.txt)) (baseNameOf (builtins.dirOf ./lib/sub/nested.txt))
  (dirOf ./lib/data.txt == ./lib) ]
