# The interpolation in `image` is never closed with '}'.
let
  version = "1.25";
in
{
  image = "nginx:${version";
  replicas = 2;
}
