[ (map (x: x * 2) [ 1 2 3 ]) (map (x: x) [ ]) (builtins.map toString [ 1 2 ]) (map (f: f 3) [ (x: x + 1) (x: x * x) ]) ]
