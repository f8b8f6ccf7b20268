# `replicas` is set twice in one set: both places should be shown.
{
  name = "web";
  replicas = 2;
  image = "nginx:1.25";
  replicas = 3;
}
