# The legacy `__overrides` of a recursive set: its attributes replace the
# set's own, also where other attributes refer to them, and add the ones
# the set lacks. A plain set or a let keeps it as an ordinary binding.
let
  changed = rec {
    __overrides = { version = 2; extra = "added"; };
    version = 1;
    name = "pkg-${toString version}";
  };
  plain = {
    __overrides = { version = 2; };
    version = 1;
  };
  inLet =
    let
      __overrides = { version = 2; };
      version = 1;
    in
    version;
in
{
  inherit changed plain inLet;
}
