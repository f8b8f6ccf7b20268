# Selecting an attribute from a string.
let
  service = "web";
in
{
  name = service.name;
}
