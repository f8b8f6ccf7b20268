# expect: attribute 'value' missing
builtins.listToAttrs [ { name = "a"; } ]
