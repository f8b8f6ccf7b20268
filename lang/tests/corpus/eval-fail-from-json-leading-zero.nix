# expect: syntax error while parsing
builtins.fromJSON "01"
