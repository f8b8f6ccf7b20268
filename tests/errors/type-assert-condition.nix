# The condition of `assert` is an integer, not a Boolean.
let
  replicas = 3;
in
assert replicas;
{ inherit replicas; }
