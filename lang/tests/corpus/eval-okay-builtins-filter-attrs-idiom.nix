let s = { a = 1; b = 2; c = 3; }; in
builtins.listToAttrs (map (n: { name = n; value = s.${n}; }) (builtins.filter (n: s.${n} != 2) (builtins.attrNames s)))
