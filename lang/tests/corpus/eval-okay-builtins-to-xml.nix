# toXML: every kind of value, forced deeply; attributes sorted, a
# function shown by its argument pattern, a builtin unevaluated.
builtins.toXML {
  int = -3;
  float = 2.5;
  bools = [ true false ];
  nothing = null;
  text = "quote \" lt < gt > amp & newline\nend";
  empty = { };
  nested.list = [ [ ] "x" { z = 1; a = 2; } ];
  plain = x: x;
  pattern = { b, a ? 1, ... }@all: all;
  strictPattern = { only }: only;
  primop = builtins.add;
  partial = builtins.add 1;
  lazy = let v = 1 + 1; in v;
}
