# expect: value is a string while a float was expected
builtins.ceil "1.5"
