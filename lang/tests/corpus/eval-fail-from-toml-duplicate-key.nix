# expect: while parsing a TOML string
builtins.fromTOML "a = 1\na = 2"
