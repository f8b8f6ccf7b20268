# `port` is an integer but it is called like a function.
let
  port = 80;
in
{
  url = port "http";
}
