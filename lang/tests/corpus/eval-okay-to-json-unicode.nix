[ (builtins.toJSON { "é" = [ "ü" ]; }) (builtins.toJSON "😀") ]
