# builtins.head of an empty list.
let
  masters = builtins.filter (n: n.role == "master") [ { role = "worker"; } ];
in
{
  first = builtins.head masters;
}
