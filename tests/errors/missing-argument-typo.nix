# `prot` is a misspelling of the required argument `port`.
let
  mkService = { name, port }: { inherit name port; };
in
mkService { name = "web"; prot = 8080; }
