# The imported file does not exist (the library is `service.nix`, not `services.nix`).
let
  lib = import ./lib/services.nix;
in
lib
