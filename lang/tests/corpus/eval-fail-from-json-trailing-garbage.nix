# expect: syntax error while parsing
builtins.fromJSON "[1] x"
