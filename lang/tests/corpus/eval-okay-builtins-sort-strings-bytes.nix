builtins.sort builtins.lessThan [ "b" "a" "é" "Z" "" "aa" "_" ]
