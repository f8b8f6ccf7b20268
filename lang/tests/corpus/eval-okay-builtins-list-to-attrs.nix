[ (builtins.listToAttrs [ { name = "a"; value = 1; } { name = "b"; value = 2; } ])
  (builtins.listToAttrs [ ])
  (builtins.listToAttrs [ { name = "dup"; value = "first"; } { name = "dup"; value = "second"; } ])
  (builtins.listToAttrs [ { name = "x"; value = 1; extra = "ignored"; } ])
  (builtins.listToAttrs (map (n: { name = n; value = builtins.stringLength n; }) [ "one" "three" ])) ]
