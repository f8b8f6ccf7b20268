# Adding a string to an integer.
let
  basePort = 8000;
in
{
  port = basePort + "80";
}
