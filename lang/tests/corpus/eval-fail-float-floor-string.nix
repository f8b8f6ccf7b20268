# expect: value is a string while a float was expected
builtins.floor "1"
