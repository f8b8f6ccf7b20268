# expect: value is a path while a string was expected
builtins.replaceStrings [ "a" ] [ "b" ] ./lib/data.txt
