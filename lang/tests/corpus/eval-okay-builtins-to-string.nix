{
  int = toString 42;
  negInt = toString (-7);
  str = toString "s";
  true = toString true;
  false = toString false;
  null = toString null;
  list = toString [ 1 2 3 ];
  nestedList = toString [ 1 [ 2 [ 3 ] ] "s" ];
  listWithBools = toString [ true false null ];
  emptyList = toString [ ];
  listOfEmptyLists = toString [ [ ] [ ] ];
  listOfEmptyStrings = toString [ "" "" ];
  outPathSet = toString { outPath = "op"; };
  toStringAttr = toString { __toString = self: "custom ${toString self.n}"; n = 1; };
  builtinsToString = builtins.toString 1;
}
