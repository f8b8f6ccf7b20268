# Appending to a string in a loop; multi-byte characters and empty parts.
let
  s = builtins.foldl' (acc: i: acc + "é${toString i}" + "") "" (builtins.genList (i: i) 50);
in
[ (builtins.stringLength s) (builtins.substring 0 12 s) ("" + "") ("ü" + "ß") (toString "kept") ]
