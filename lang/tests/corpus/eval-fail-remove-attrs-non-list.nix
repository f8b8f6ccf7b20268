# expect: value is a string while a list was expected
removeAttrs { a = 1; } "a"
