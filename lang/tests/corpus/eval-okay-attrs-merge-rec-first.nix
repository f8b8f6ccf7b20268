# Nix merges a later `name.attr = …` (or a second set literal) into a set
# literal given earlier for the same name, even a `rec` one; the merged
# bindings then see the recursive scope of that first set (NixOS/nix#9020).
let
  width = "outer width";
  shape = {
    box = rec {
      area = width * height;
      width = 4;
    };
    box.height = width + 1;
  };
  later = {
    cfg = rec { port = 80; };
    cfg = { url = "http://host:${toString port}"; };
  };
  inLet =
    let
      base = rec { name = "base"; };
      base.label = "label of ${name}";
    in
    base;
in
{
  inherit width;
  box = shape.box;
  cfg = later.cfg;
  inherit inLet;
}
