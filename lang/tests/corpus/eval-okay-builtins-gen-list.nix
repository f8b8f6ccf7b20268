[ (builtins.genList (i: i * i) 5) (builtins.genList (i: i) 0) (builtins.genList (i: "x${toString i}") 3) (builtins.genList (x: [ x ]) 2) ]
