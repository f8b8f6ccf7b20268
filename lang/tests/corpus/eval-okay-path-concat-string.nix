let p = ./lib + "/data.txt"; in [ (builtins.typeOf p) (builtins.readFile p) (baseNameOf p) (p == ./lib/data.txt) ]
