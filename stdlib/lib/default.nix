# The stdlib's helper library, gathered in one attrset: text, yaml, ip, errors,
# records (closure constructors) and a few version helpers.
let
  inherit (builtins) compareVersions splitVersion elemAt length concatStringsSep;
in
{
  text = import ./text.nix;
  yaml = import ./yaml.nix;
  ip = import ./ip.nix;
  errors = import ./errors.nix;
  records = import ./records.nix;

  version = rec {
    atLeast = v: min: compareVersions v min >= 0;
    below = v: max: compareVersions v max < 0;
    # "1.31.4" -> "1.31"
    majorMinor = v:
      let p = splitVersion v; in
      if length p < 2 then v else "${elemAt p 0}.${elemAt p 1}";
  };
}
