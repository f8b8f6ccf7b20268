[ (builtins.hashString "md5" "é") (builtins.hashString "sha1" "日本") ]
