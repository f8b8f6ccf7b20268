# expect: value is an integer while a string was expected
builtins.replaceStrings [ "a" ] [ 1 ] "a"
