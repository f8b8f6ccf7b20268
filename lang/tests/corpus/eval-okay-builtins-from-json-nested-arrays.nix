builtins.fromJSON "[[[[[1]]]], [], [[]], {\"a\": [{}]}]"
