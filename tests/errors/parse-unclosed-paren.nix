# The parenthesis opened on line 3 is never closed.
let
  total = (1 + 2 * 3;
in
total
