# ++ binds tighter than + (and * binds tighter than ++ cannot be mixed with lists, so test via lengths)
builtins.length ([ 1 ] ++ [ 2 ]) + 1
