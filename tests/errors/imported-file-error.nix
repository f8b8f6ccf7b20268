# The error is inside the imported file lib/service.nix.
let
  services = import ./lib/service.nix;
in
services.mkService { name = "web"; port = "80"; }
