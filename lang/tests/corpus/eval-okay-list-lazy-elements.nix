[ (builtins.length [ (throw "a") (abort "b") ]) (builtins.head [ 1 (throw "x") ]) (builtins.elemAt [ (throw "x") 2 ] 1) ]
