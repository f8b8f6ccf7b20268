# Index 5 of a three-element list.
let
  nodes = [ "a" "b" "c" ];
in
{
  sixth = builtins.elemAt nodes 5;
}
