let c = builtins.concatStringsSep; in
[ (c ", " [ "a" "b" "c" ]) (c ", " [ ]) (c ", " [ "only" ]) (c "" [ "x" "y" ]) (c "-" [ "" "" ]) (c "/" [ "a" ])
  (c " " [ "s" (toString 1) ]) ]
