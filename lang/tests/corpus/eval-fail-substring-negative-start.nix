# expect: negative start position in 'substring'
builtins.substring (-1) 2 "abc"
