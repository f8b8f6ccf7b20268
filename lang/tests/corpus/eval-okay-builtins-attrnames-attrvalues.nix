let s = { c = 3; a = 1; b = 2; B = 0; }; in
{ names = builtins.attrNames s; values = builtins.attrValues s; emptyNames = builtins.attrNames { }; emptyValues = builtins.attrValues { }; }
