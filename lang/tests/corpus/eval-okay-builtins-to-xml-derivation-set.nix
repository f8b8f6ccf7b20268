# A set with type = "derivation" is written as a derivation element, with
# its drvPath and outPath (strings) as attributes, and in full only the
# first time a drvPath is seen. No store is involved: these are plain sets.
let
  fake = { type = "derivation"; drvPath = "/fake/a.drv"; outPath = "/fake/a"; name = "a"; };
  noDrvPath = { type = "derivation"; outPath = 7; };
in
builtins.toXML [ fake fake noDrvPath ]
