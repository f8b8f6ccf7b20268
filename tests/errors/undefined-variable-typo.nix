# `replica` is a misspelling of the `replicas` bound just above.
let
  replicas = 3;
  image = "nginx:1.25";
in
{
  spec.replicas = replica;
  spec.image = image;
}
