# kdeploy strings are UTF-8: a cut inside a character becomes U+FFFD (3 bytes); Nix keeps the raw byte (length 1).
[ (builtins.stringLength (builtins.substring 0 1 "é")) (builtins.substring 0 2 "éa") (builtins.substring 2 1 "éa") ]
