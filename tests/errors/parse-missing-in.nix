# A `let` whose body is missing: the file ends after the bindings.
let
  replicas = 3;
  image = "nginx:1.25";
