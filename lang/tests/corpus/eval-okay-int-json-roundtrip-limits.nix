[ (builtins.toJSON 9223372036854775807) (builtins.fromJSON (builtins.toJSON (-9223372036854775807 - 1))) ]
