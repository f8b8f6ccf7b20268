# The closing quote of `image` is missing: the next quote closes it instead,
# and the one after opens a string that runs to the end of the file.
{
  image = "nginx:1.25;
  name = "web";
  replicas = 2;
}
