builtins.attrValues (builtins.mapAttrs (name: _: name) { b = 1; a = 2; })
