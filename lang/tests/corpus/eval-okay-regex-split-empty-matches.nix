let s = builtins.split; in [ (s "x*" "abc") (s "" "abc") (s "a*" "baaac") (s "," "") (s "" "") ]
