builtins.concatStringsSep "," (builtins.concatMap (x: [ x (x + x) ]) [ "a" "b" ])
