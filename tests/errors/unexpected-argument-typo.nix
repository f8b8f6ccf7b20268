# `prot` is a misspelling of the argument `port`.
let
  mkService = { name, port ? 80 }: { inherit name port; };
in
mkService { name = "web"; prot = 8080; }
