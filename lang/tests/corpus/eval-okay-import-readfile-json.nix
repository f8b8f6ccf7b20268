builtins.fromJSON (builtins.readFile ./lib/json/data.json)
