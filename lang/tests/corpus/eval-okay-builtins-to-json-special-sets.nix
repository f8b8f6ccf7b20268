[ (builtins.toJSON { outPath = "out"; a = 1; }) (builtins.toJSON { __toString = self: "str"; a = 1; }) ]
