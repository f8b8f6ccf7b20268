# expect: value is an integer while a string was expected
builtins.hashString "md5" 1
