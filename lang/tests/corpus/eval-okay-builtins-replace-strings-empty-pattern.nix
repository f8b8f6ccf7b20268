# an empty pattern matches between characters (Nix 2.8 semantics)
let r = builtins.replaceStrings; in [ (r [ "" ] [ "X" ] "abc") (r [ "a" "" ] [ "A" "-" ] "abc") (r [ "" ] [ "X" ] "") ]
