# ++ is right associative; either way the result is the same
[ ([ 1 ] ++ ([ 2 ] ++ [ 3 ])) (([ 1 ] ++ [ 2 ]) ++ [ 3 ]) ([ 1 ] ++ [ 2 ] ++ [ 3 ]) ]
