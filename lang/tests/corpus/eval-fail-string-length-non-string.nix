# expect: cannot coerce an integer to a string
builtins.stringLength 42
