# expect: value is an integer while a string was expected
builtins.match "a" 1
