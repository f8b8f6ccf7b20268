# expect: attribute 'name' missing
builtins.listToAttrs [ { value = 1; } ]
