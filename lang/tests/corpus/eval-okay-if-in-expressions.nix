[ (1 + (if true then 1 else 2)) ((if false then [ 1 ] else [ 2 ]) ++ [ 3 ]) (if true then { a = 1; } else { }).a ]
