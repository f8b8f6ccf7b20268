builtins.fromTOML (builtins.readFile ./lib/toml/strings.toml)
