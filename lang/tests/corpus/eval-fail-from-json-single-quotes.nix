# expect: syntax error while parsing
builtins.fromJSON "{'a': 1}"
