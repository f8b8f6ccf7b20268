builtins.filter builtins.isString (builtins.split "/" "usr/local/bin")
