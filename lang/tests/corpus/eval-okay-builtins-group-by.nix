[ (builtins.groupBy (x: if x > 2 then "big" else "small") [ 1 2 3 4 ]) (builtins.groupBy (x: x) [ ]) (builtins.groupBy (s: builtins.substring 0 1 s) [ "apple" "avocado" "banana" ]) ]
