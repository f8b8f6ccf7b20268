let s = { "1" = "one"; "01" = "zero-one"; "10" = "ten"; "2" = "two"; }; in { inherit s; one = s."1"; names = builtins.attrNames s; }
