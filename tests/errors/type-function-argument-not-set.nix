# A function with named arguments is called with a string.
let
  mkService = { name, port ? 80 }: { inherit name port; };
in
mkService "web"
