# expect: value is a string while a list was expected
builtins.length "abc"
