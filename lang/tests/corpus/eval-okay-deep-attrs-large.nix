let s = builtins.listToAttrs (builtins.genList (i: { name = "k${toString i}"; value = i; }) 10000); in
[ (builtins.length (builtins.attrNames s)) s.k9999 (builtins.head (builtins.attrNames s)) ]
