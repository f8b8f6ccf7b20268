[ (builtins.length [ ]) (builtins.length [ 1 ]) (builtins.length [ [ 1 2 ] 3 ]) (builtins.length (builtins.genList (x: x) 1000)) ]
