# expect: cannot convert a function to JSON
builtins.toJSON (x: x)
