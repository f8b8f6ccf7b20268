# toJSON (and --json) of a set with `outPath` is the JSON of that value, of
# any type; a set with `__toString` is the string it returns, even when it
# has an `outPath` too.
let
  wrap = v: { outPath = v; ignored = "never shown"; };
in
{
  number = wrap 7;
  list = wrap [ 1 (wrap "two") { three = 3; } ];
  nested = wrap (wrap (wrap { deep = true; }));
  plain = wrap { x = 1; };
  stringFirst = { __toString = self: "from toString"; outPath = 1; };
  toStringGivesSet = { __toString = self: wrap "peeled"; };
  encoded = builtins.toJSON (wrap [ (wrap null) ]);
}
