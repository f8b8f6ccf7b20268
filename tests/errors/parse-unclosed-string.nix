# The string after `image =` is never closed.
{
  name = "web";
  image = "nginx:1.25;
  replicas = 2;
}
