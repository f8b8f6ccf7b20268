let a = { x = [ 1 { y = "z"; } ]; n = null; }; b = { n = null; x = [ 1 { y = "z"; } ]; }; in
[ (a == b) (a == b // { n = 1; }) ([ a ] == [ b ]) ({ inner = a; } == { inner = b; }) ]
