# An integer interpolated into a string (needs toString).
let
  port = 8080;
in
{
  url = "http://localhost:${port}/";
}
