# Two set literals for one name, or a path into one, give one set whose
# bindings are those of both; the second set's `rec` makes no difference.
# (Nix 2.8 drops the second set's dynamic attributes, `${e} = …`, where
# later Nix and kdeploy keep them: see DIFFERENCES.md.)
let
  suffix = "from let";
in
{
  twice = {
    a = { one = 1; };
    a = { two = 2; ${"quoted"} = "constant name"; };
  };
  pathFirst = {
    b.x = 1;
    b = { y = 2; };
    b.z.deep = 3;
  };
  secondRecIgnored = {
    c = { suffix = "own"; };
    c = rec { shown = suffix; };
  };
}
