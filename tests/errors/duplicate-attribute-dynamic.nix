# A dynamic attribute name collides with a static one (found at evaluation).
let
  key = "port";
in
{
  port = 80;
  ${key} = 8080;
}
