# expect: while parsing a TOML string
builtins.fromTOML "a = "
