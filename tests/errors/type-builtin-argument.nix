# builtins.attrNames wants a set; it is given a list.
let
  services = [ "web" "db" ];
in
{
  names = builtins.attrNames services;
}
