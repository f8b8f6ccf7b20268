# expect: value is an integer while a string was expected
builtins.splitVersion 1
