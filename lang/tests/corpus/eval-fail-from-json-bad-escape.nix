# expect: invalid string
builtins.fromJSON ''"\x"''
