# An `if` without its `else` branch.
let
  replicas = if true then 3;
in
replicas
