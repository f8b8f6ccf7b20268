[ (builtins.hashString "sha512" "") (builtins.hashString "sha512" "abc") ]
