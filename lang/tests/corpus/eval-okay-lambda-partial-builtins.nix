let addTen = builtins.add 10; getA = builtins.getAttr "a"; in [ (addTen 5) (getA { a = "A"; }) (map (builtins.elemAt [ "x" "y" "z" ]) [ 2 0 ]) ]
