builtins.elemAt (builtins.genList (i: if i == 5 then 5 else throw "forced element ${toString i}") 10) 5
