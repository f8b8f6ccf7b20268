builtins.attrNames { "é" = 1; "z" = 2; "Z" = 3; "_" = 4; "~" = 5; "a" = 6; }
