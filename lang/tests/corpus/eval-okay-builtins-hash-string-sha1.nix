[ (builtins.hashString "sha1" "") (builtins.hashString "sha1" "abc") (builtins.hashString "sha1" "hello\n") ]
