# The same function argument is declared twice.
let
  mkService = { name, port, name }: { inherit name port; };
in
mkService { name = "web"; port = 80; }
