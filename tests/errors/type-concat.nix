# '++' concatenates lists; here the right side is a set.
let
  ports = [ 80 443 ];
  extra = { metrics = 9100; };
in
{
  all = ports ++ extra;
}
