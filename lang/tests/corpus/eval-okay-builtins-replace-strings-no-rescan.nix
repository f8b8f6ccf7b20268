# replaced text is not scanned again
[ (builtins.replaceStrings [ "a" "b" ] [ "b" "a" ] "ab") (builtins.replaceStrings [ "aa" ] [ "a" ] "aaaa") ]
