# expect: cannot coerce an integer to a string
builtins.concatStringsSep "," [ "a" 1 ]
