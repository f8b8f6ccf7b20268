builtins.attrNames (builtins.listToAttrs [ { name = "x"; value = throw "value"; } ])
