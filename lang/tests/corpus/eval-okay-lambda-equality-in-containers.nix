# Nix 2.8 compares list elements and attribute values by pointer first, so the
# same function value inside a container compares equal (see DIFFERENCES.md)
let f = x: x; in [ ([ f ] == [ f ]) ({ a = f; } == { a = f; }) ([ (x: x) ] == [ (x: x) ]) ]
