# expect: 'from' and 'to' arguments to 'replaceStrings' have different lengths
builtins.replaceStrings [ "a" "b" ] [ "c" ] "ab"
