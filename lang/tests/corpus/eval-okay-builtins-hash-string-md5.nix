[ (builtins.hashString "md5" "") (builtins.hashString "md5" "abc") (builtins.hashString "md5" "The quick brown fox jumps over the lazy dog") ]
