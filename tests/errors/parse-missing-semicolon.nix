# A binding without its ';': the error should point at the end of `replicas = 3`.
let
  replicas = 3
  image = "nginx:1.25";
in
{ inherit replicas image; }
