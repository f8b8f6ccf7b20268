# expect: value is a set while a list was expected
builtins.elemAt { } 0
