builtins.fromJSON "\n\t { \"a\" :\n [ 1 ,2 ] }\n "
