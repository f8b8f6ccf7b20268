# A misspelt function name from an imported library.
let
  lib = import ./lib/service.nix;
in
lib.mkServise { name = "web"; port = 80; }
