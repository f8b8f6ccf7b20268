# A set interpolated into a string.
let
  service = { name = "web"; port = 80; };
in
"service: ${service}"
