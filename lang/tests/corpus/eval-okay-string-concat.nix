[ ("a" + "b") ("" + "") ("foo" + "" + "bar") ("x" + toString 1) (builtins.concatStringsSep "" [ "a" "b" "c" ]) ]
