# The condition of `if` is a string, not a Boolean.
let
  enableTls = "yes";
in
{
  port = if enableTls then 443 else 80;
}
