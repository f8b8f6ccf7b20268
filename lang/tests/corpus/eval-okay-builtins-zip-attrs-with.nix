[ (builtins.zipAttrsWith (name: values: values) [ { a = 1; b = 2; } { a = 3; } { c = 4; } ])
  (builtins.zipAttrsWith (n: vs: builtins.length vs) [ ])
  (builtins.zipAttrsWith (n: vs: n + builtins.concatStringsSep "," vs) [ { x = "1"; } { x = "2"; y = "3"; } ]) ]
