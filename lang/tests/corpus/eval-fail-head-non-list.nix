# expect: value is an integer while a list was expected
builtins.head 1
