let inherit (builtins) length head; in { l = length [ 1 2 ]; h = head [ "x" ]; }
