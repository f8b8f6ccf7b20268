# A variable defined as itself.
let
  x = x;
in
x
