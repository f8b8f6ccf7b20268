# `mkService` requires `port`, which the call does not pass.
let
  mkService = { name, port, replicas ? 1 }: { inherit name port replicas; };
in
mkService { name = "web"; }
