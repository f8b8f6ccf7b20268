let fs = [ builtins.head builtins.length (builtins.elemAt [ "a" "b" ]) ]; in
[ ((builtins.elemAt fs 0) [ 7 ]) ((builtins.elemAt fs 1) [ 7 8 ]) ((builtins.elemAt fs 2) 1) ]
