[ (builtins.typeOf "") (builtins.isString "x") (builtins.isString ''y'') (builtins.isString 1) (builtins.isString null) ]
