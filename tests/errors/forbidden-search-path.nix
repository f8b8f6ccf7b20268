# Only <kdeploy> is on the search path.
let
  pkgs = import <nixpkgs> { };
in
pkgs.hello
