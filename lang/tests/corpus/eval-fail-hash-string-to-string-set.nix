# expect: value is a set while a string was expected
builtins.hashString "md5" { __toString = s: "a"; }
