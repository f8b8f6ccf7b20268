let s = builtins.substring; in
[ (s 0 3 "hello") (s 1 3 "hello") (s 3 100 "hello") (s 5 1 "hello") (s 10 1 "hello") (s 0 0 "hello") (s 2 (-1) "hello") (s 0 1 "") ]
