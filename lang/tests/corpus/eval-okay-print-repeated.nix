# Printed without --json, Nix 2.8 shows a set or list it has already
# printed as «repeated», wherever it comes again; a short list counts as
# the same only when it is the same variable.
let
  shared = { port = 80; };
  three = [ 1 2 3 ];
  one = [ "x" ];
  loop = [ loop ];
in
{
  a = shared;
  b = [ shared three one ];
  c = [ three one [ "x" ] ];
  d = loop;
}
