# The imported file lib/broken.nix does not parse.
let
  broken = import ./lib/broken.nix;
in
broken.value
