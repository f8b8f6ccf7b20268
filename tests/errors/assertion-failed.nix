# The assertion on the port range fails.
let
  port = 70000;
in
assert port > 0 && port < 65536;
{ inherit port; }
