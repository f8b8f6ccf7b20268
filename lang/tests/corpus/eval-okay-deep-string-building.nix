builtins.stringLength (builtins.foldl' (acc: x: acc + "ab") "" (builtins.genList (i: i) 10000))
