# stringLength counts bytes, not characters
[ (builtins.stringLength "") (builtins.stringLength "abc") (builtins.stringLength "é") (builtins.stringLength "日本")
  (builtins.stringLength "a\nb") ]
