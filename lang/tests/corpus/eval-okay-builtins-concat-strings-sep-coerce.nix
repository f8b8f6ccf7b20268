# elements are coerced like string interpolation: sets with outPath are allowed
builtins.concatStringsSep "+" [ "a" { outPath = "b"; } ]
