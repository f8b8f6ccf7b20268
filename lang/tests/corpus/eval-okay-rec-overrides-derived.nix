# An attribute of a recursive set worked out from another (`b = a + 1`,
# `c = x.n`, `d = s.n` for a set of the same scope) sees the value
# `__overrides` gives that other, however simple the expression: nothing
# of the set is worked out before the overrides are in place.
let
  x = { n = 1; };
  set = rec {
    a = 1;
    s = { n = 2; };
    b = a + 1;
    c = x.n;
    d = s.n;
    e = a;
    __overrides = { a = 10; s = { n = 20; }; x = { n = 30; }; };
  };
in
{ inherit (set) a b c d e; }
