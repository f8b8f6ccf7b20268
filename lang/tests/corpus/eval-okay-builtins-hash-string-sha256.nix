[ (builtins.hashString "sha256" "") (builtins.hashString "sha256" "abc") (builtins.hashString "sha256" "ünïcödé") ]
