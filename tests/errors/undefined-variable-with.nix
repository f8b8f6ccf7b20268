# Under `with`, an unknown name is only found missing at evaluation time.
let
  defaults = { replicas = 3; image = "nginx:1.25"; };
in
with defaults;
{
  count = replcas;
}
