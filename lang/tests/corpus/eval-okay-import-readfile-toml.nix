builtins.fromTOML (builtins.readFile ./lib/toml/config.toml)
