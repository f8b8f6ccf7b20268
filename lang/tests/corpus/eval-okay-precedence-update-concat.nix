# // and ++ bind tighter than comparison
[ ({ a = 1; } // { b = 2; } == { a = 1; b = 2; }) ([ 1 ] ++ [ 2 ] == [ 1 2 ]) ]
