# toPath turns a string (or anything interpolation accepts) holding an
# absolute path into a normalised path string; nothing is read.
let
  dir = toString ./lib;
in
[
  (builtins.toPath "/a/b/../c//d/.")
  (builtins.isString (builtins.toPath "/x"))
  (builtins.typeOf (builtins.toPath ./lib))
  (builtins.toPath "/no/such/file/anywhere") 
  (builtins.toPath { __toString = _: "/from/set/.."; })
  (builtins.toPath ./lib == dir)
]
