builtins.listToAttrs [ { name = "a.b"; value = 1; } { name = ""; value = 2; } ]
