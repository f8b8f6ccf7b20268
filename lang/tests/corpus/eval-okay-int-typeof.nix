[ (builtins.typeOf 1) (builtins.isInt 1) (builtins.isInt 1.0) (builtins.isInt "1") (builtins.isFloat 1) ]
