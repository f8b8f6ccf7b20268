# substring works on bytes
[ (builtins.stringLength (builtins.substring 0 1 "é")) (builtins.substring 0 2 "éa") (builtins.substring 2 1 "éa") ]
